# Blending: mix raw oils into a product whose properties (weighted averages) stay within
# bounds; bounds left out of the data are open.
set OILS;
set PROPS;

param price {OILS} >= 0;
param stock {OILS} >= 0, default Infinity;
param content {OILS, PROPS};
param lo {PROPS} default -Infinity;
param hi {PROPS} default Infinity;
param amount > 0;

var Use {o in OILS} >= 0, <= stock[o];

minimize Cost: sum {o in OILS} price[o] * Use[o];

subject to Total: sum {o in OILS} Use[o] = amount;
subject to Low {p in PROPS: lo[p] > -Infinity}:
   sum {o in OILS} content[o,p] * Use[o] >= lo[p] * amount;
subject to High {p in PROPS: hi[p] < Infinity}:
   sum {o in OILS} content[o,p] * Use[o] <= hi[p] * amount;
