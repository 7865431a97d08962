# Travelling salesman, Miller-Tucker-Zemlin form, on a few cities given by coordinates. The
# tour starts at first(CITIES); ord positions bound the MTZ order variables.
set CITIES ordered;
param x {CITIES};
param y {CITIES};
set LINKS = {i in CITIES, j in CITIES: i <> j};
param dist {(i,j) in LINKS} = sqrt((x[i] - x[j])^2 + (y[i] - y[j])^2);
param n = card(CITIES);

var Go {LINKS} binary;
var Order {c in CITIES} >= 0, <= n - 1;

minimize Tour: sum {(i,j) in LINKS} dist[i,j] * Go[i,j];

s.t. Leave {i in CITIES}: sum {(i,j) in LINKS} Go[i,j] = 1;
s.t. Enter {j in CITIES}: sum {(i,j) in LINKS} Go[i,j] = 1;
s.t. Home: Order[first(CITIES)] = 0;
s.t. MTZ {(i,j) in LINKS: j <> first(CITIES)}:
   Order[j] >= Order[i] + 1 - n * (1 - Go[i,j]);
