# Purchasing with storage over ordered months: buy at a monthly price, store up to a capacity,
# start from the stock on hand at first(MONTHS) and leave a safety stock at last(MONTHS).
# The balance links each month to next(t).
set MONTHS ordered;
param price {MONTHS} > 0;
param demand {MONTHS} >= 0;
param store_cap > 0;
param hold >= 0;
param start_stock >= 0, <= store_cap;
param end_stock >= 0, <= store_cap;
param buy_cap {MONTHS} > 0, default 200;
param audit integer, >= 1, <= card(MONTHS);   # the month (by position) of the stock audit
param audit_stock >= 0;

var Buy {t in MONTHS} >= 0, <= buy_cap[t];
var Stock {MONTHS} >= 0, <= store_cap;   # at the end of the month

minimize Cost: sum {t in MONTHS} (price[t] * Buy[t] + hold * Stock[t]);

s.t. First_Month: Stock[first(MONTHS)] = start_stock + Buy[first(MONTHS)] - demand[first(MONTHS)];
s.t. Carry {t in MONTHS: t <> last(MONTHS)}:
   Stock[next(t)] = Stock[t] + Buy[next(t, MONTHS)] - demand[next(t)];
s.t. Safety: Stock[last(MONTHS)] >= end_stock;
s.t. Audit: Stock[member(audit, MONTHS)] >= audit_stock;
