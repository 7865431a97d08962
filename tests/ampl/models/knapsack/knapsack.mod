# Bounded knapsack: take up to `avail` copies of each item within a weight and a volume limit.
set ITEMS;
param value {ITEMS} >= 0;
param weight {ITEMS} > 0;
param volume {i in ITEMS} > 0, default 1;
param avail {ITEMS} integer, >= 0, default 10;
param max_weight > 0;
param max_volume > 0;

var Take {i in ITEMS} >= 0, <= avail[i], integer;

maximize Total_Value: sum {i in ITEMS} value[i] * Take[i];

subject to Weight: sum {i in ITEMS} weight[i] * Take[i] <= max_weight;
subject to Volume: sum {i in ITEMS} volume[i] * Take[i] <= max_volume;
