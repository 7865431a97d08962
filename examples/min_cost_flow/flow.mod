# Minimum-cost flow, written the way AMPL models usually write it: the arcs are a set of pairs,
# and each node's balance picks its arcs with filters. dfl reads the file unchanged; the
# filters are joined like the pattern `sum{(k, j) in ARCS}`, so large networks stay fast.

set NODES;
set ARCS within {NODES, NODES};

param supply {NODES} default 0;     # > 0: the node ships this much; < 0: it receives it
param cost {ARCS} >= 0;             # per unit shipped on the arc
param cap {ARCS} >= 0;              # the arc's capacity

var Flow {(i, j) in ARCS} >= 0, <= cap[i, j];

minimize Total_Cost: sum {(i, j) in ARCS} cost[i, j] * Flow[i, j];

subject to Balance {k in NODES}:
    sum {j in NODES: (k, j) in ARCS} Flow[k, j]
  - sum {(i, j) in ARCS: j = k} Flow[i, j] = supply[k];
