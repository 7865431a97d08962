# Weighted set cover: pick stations so that every district is covered by at least `need`
# of them. Which districts a station covers is an indexed set, tested with `in`.
set DISTRICTS;
set STATIONS;
set REACH {STATIONS} within DISTRICTS;
param cost {STATIONS} > 0;
param need {DISTRICTS} integer, >= 1, default 1;

check {d in DISTRICTS}: card({s in STATIONS: d in REACH[s]}) >= need[d];

var Build {STATIONS} binary;

minimize Total: sum {s in STATIONS} cost[s] * Build[s];

subject to Covered {d in DISTRICTS}: sum {s in STATIONS: d in REACH[s]} Build[s] >= need[d];
