# Multi-commodity transportation with fixed charges: a lane carries products only when it is
# opened (fixed cost), up to its capacity; a route (i, j, p) may carry product p on lane (i, j).
set ORIG;
set DEST;
set PROD;
set ROUTES within ORIG cross DEST cross PROD;
set LANES = setof {(i,j,p) in ROUTES} (i,j);

param supply {ORIG, PROD} >= 0;
param demand {DEST, PROD} >= 0;
param limit {LANES} > 0;
param vcost {ROUTES} >= 0;
param fcost {LANES} >= 0;

check {p in PROD}: sum {i in ORIG} supply[i,p] = sum {j in DEST} demand[j,p];

var Trans {ROUTES} >= 0;
var Use {LANES} binary;

minimize Total_Cost:
   sum {(i,j,p) in ROUTES} vcost[i,j,p] * Trans[i,j,p] + sum {(i,j) in LANES} fcost[i,j] * Use[i,j];

subject to Supply {i in ORIG, p in PROD}: sum {(i,j,p) in ROUTES} Trans[i,j,p] = supply[i,p];
subject to Demand {j in DEST, p in PROD}: sum {(i,j,p) in ROUTES} Trans[i,j,p] = demand[j,p];
subject to Multi {(i,j) in LANES}: sum {(i,j,p) in ROUTES} Trans[i,j,p] <= limit[i,j] * Use[i,j];
