# Multi-period production planning: make, hold and sell products over T weeks with limited
# hours per week; revenue minus production and holding costs is maximized.
set PROD;
param T > 0, integer;

param rate {PROD} > 0;          # tons per hour
param inv0 {PROD} >= 0;         # initial inventory
param avail {1..T} >= 0;        # hours available per week
param market {PROD, 1..T} >= 0; # sales limit
param prodcost {PROD} >= 0;
param invcost {PROD} >= 0;
param revenue {PROD, 1..T} >= 0;

var Make {PROD, 1..T} >= 0;
var Inv {PROD, 0..T} >= 0;
var Sell {p in PROD, t in 1..T} >= 0, <= market[p,t];

maximize Total_Profit:
   sum {p in PROD, t in 1..T}
      (revenue[p,t]*Sell[p,t] - prodcost[p]*Make[p,t] - invcost[p]*Inv[p,t]);

s.t. Time {t in 1..T}: sum {p in PROD} (1/rate[p]) * Make[p,t] <= avail[t];

s.t. Init_Inv {p in PROD}: Inv[p,0] = inv0[p];

s.t. Balance {p in PROD, t in 1..T}: Make[p,t] + Inv[p,t-1] = Sell[p,t] + Inv[p,t];
