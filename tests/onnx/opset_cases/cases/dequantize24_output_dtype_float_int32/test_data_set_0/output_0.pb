ByJo
#DDÛCÔMhDðhD¥tÃPýD