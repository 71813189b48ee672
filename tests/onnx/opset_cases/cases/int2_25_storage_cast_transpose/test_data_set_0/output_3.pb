
BiuJзд