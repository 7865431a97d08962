# Warehouse supply across regions with symbolic data: each store's region is a symbolic param
# in REGIONS, the hub is a symbolic param, and shipments cost extra where the store's region
# <> the warehouse's region. The hub region gets at least a share of the total.
set REGIONS;
set WAREHOUSES;
set STORES;
param w_region {WAREHOUSES} symbolic in REGIONS;
param s_region {STORES} symbolic in REGIONS;
param hub symbolic in REGIONS;
param stock {WAREHOUSES} >= 0;
param demand {STORES} >= 0;
param base {WAREHOUSES, STORES} >= 0;
param cross_fee >= 0;
param hub_share >= 0, <= 1;

var Ship {WAREHOUSES, STORES} >= 0;

minimize Cost: sum {w in WAREHOUSES, s in STORES}
   (base[w,s] + (if w_region[w] <> s_region[s] then cross_fee else 0)) * Ship[w,s];

s.t. Stock {w in WAREHOUSES}: sum {s in STORES} Ship[w,s] <= stock[w];
s.t. Demand {s in STORES}: sum {w in WAREHOUSES} Ship[w,s] >= demand[s];
s.t. Hub_Use: sum {w in WAREHOUSES, s in STORES: w_region[w] = hub} Ship[w,s]
   >= hub_share * sum {s in STORES} demand[s];
