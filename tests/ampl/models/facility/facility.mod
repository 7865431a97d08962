# Capacitated facility location: open sites (fixed cost) and serve every customer's demand
# from open sites. Sites already open (binary param) pay no opening cost.
set SITES;
set CUST;

param fixed {SITES} > 0;
param capacity {SITES} > 0;
param is_open {SITES} binary, default 0;
param demand {CUST} > 0;
param ship {SITES, CUST} >= 0;   # cost of serving a customer entirely from a site

var Open {SITES} binary;
var Serve {SITES, CUST} >= 0, <= 1;

minimize Cost:
   sum {i in SITES} (1 - is_open[i]) * fixed[i] * Open[i]
 + sum {i in SITES, j in CUST} ship[i,j] * Serve[i,j];

s.t. Assign {j in CUST}: sum {i in SITES} Serve[i,j] = 1;
s.t. Capacity {i in SITES}: sum {j in CUST} demand[j] * Serve[i,j] <= capacity[i] * Open[i];
s.t. Link {i in SITES, j in CUST}: Serve[i,j] <= Open[i];
