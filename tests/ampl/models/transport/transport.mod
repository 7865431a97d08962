# Transportation: ship from mills to factories at least cost; supply must cover demand.
set ORIG;
set DEST;

param supply {ORIG} >= 0;
param demand {DEST} >= 0;
param cost {ORIG, DEST} >= 0;

check: sum {i in ORIG} supply[i] >= sum {j in DEST} demand[j];
check {j in DEST}: demand[j] <= sum {i in ORIG} supply[i];

var Trans {ORIG, DEST} >= 0;

minimize Total_Cost: sum {i in ORIG, j in DEST} cost[i,j] * Trans[i,j];

subject to Supply {i in ORIG}: sum {j in DEST} Trans[i,j] <= supply[i];
subject to Demand {j in DEST}: sum {i in ORIG} Trans[i,j] = demand[j];
