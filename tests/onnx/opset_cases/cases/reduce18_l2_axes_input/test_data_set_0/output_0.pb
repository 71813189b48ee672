ByJ
Dw@n(O@Ýhv@