# Minimum-cost network flow: nodes supply (b > 0) or demand (b < 0) a good; arcs carry it at a
# unit cost up to a capacity. Inflow is written with a tuple membership in the condition.
set NODES;
set ARCS within NODES cross NODES;

param b {NODES} default 0;
param cost {ARCS} >= 0;
param cap {ARCS} > 0, default Infinity;

check: sum {i in NODES} b[i] = 0;

var Flow {(i,j) in ARCS} >= 0, <= cap[i,j];

minimize Total_Cost: sum {(i,j) in ARCS} cost[i,j] * Flow[i,j];

subject to Balance {i in NODES}:
   sum {(i,j) in ARCS} Flow[i,j] - sum {j in NODES: (j,i) in ARCS} Flow[j,i] = b[i];
