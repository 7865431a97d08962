# A workshop's plan with three named objectives: profit (the default, first), overtime hours,
# and leftover material. Each is solved on its own with --objective NAME.
set PRODUCTS;
set MACHINES;
param profit {PRODUCTS};
param hours {MACHINES, PRODUCTS} >= 0;
param regular {MACHINES} >= 0;
param overtime_max {MACHINES} >= 0;
param material {PRODUCTS} >= 0;
param material_avail >= 0;
param min_make {PRODUCTS} >= 0, default 0;
param max_make {p in PRODUCTS} >= min_make[p];

var Make {p in PRODUCTS} >= min_make[p], <= max_make[p];
var Over {m in MACHINES} >= 0, <= overtime_max[m];

maximize Total_Profit: sum {p in PRODUCTS} profit[p] * Make[p] - 30 * sum {m in MACHINES} Over[m];
minimize Overtime: sum {m in MACHINES} Over[m];
minimize Leftover: material_avail - sum {p in PRODUCTS} material[p] * Make[p];

subject to Capacity {m in MACHINES}:
   sum {p in PRODUCTS} hours[m,p] * Make[p] <= regular[m] + Over[m];
subject to Material: sum {p in PRODUCTS} material[p] * Make[p] <= material_avail;
