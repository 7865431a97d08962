# Multi-period transportation with storage at the destinations: costs change by period (a
# three-index param, given in the data as one table per period), stock carries over.
set ORIG;
set DEST;
param T integer, > 0;
set PERIODS = 1..T;

param supply {ORIG, PERIODS} >= 0;
param demand {DEST, PERIODS} >= 0;
param cost {ORIG, DEST, PERIODS} >= 0;
param hold {DEST} >= 0;
param store {DEST} >= 0, default Infinity;

var Ship {ORIG, DEST, PERIODS} >= 0;
var Stock {j in DEST, 0..T} >= 0, <= store[j];

minimize Total_Cost:
   sum {i in ORIG, j in DEST, t in PERIODS} cost[i,j,t] * Ship[i,j,t]
 + sum {j in DEST, t in PERIODS} hold[j] * Stock[j,t];

s.t. Empty {j in DEST}: Stock[j,0] = 0;
s.t. Supply {i in ORIG, t in PERIODS}: sum {j in DEST} Ship[i,j,t] <= supply[i,t];
s.t. Balance {j in DEST, t in PERIODS}:
   Stock[j,t-1] + sum {i in ORIG} Ship[i,j,t] = demand[j,t] + Stock[j,t];
