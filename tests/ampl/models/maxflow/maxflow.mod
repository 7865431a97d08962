# Maximum flow from a source to a sink. The source and sink are symbolic parameters; the
# objective sums the arcs leaving the source with the element param as a tuple component.
set NODES;
param s symbolic in NODES;
param t symbolic in NODES, <> s;

set ARCS within (NODES diff {t}) cross (NODES diff {s});
param cap {ARCS} >= 0;

var Flow {(i,j) in ARCS} >= 0, <= cap[i,j];

maximize Total_Flow: sum {(s,j) in ARCS} Flow[s,j];

subject to Conserve {k in NODES diff {s, t}}:
   sum {(i,k) in ARCS} Flow[i,k] = sum {(k,j) in ARCS} Flow[k,j];
