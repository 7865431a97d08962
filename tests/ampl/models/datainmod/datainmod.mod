# A bakery's daily plan, with its data after `data;` in the same file, as many published
# models are distributed. Oven and labor hours limit what can be baked; sales are capped.
set GOODS;
set RESOURCES;
param price {GOODS} > 0;
param cap {RESOURCES} >= 0;
param use {RESOURCES, GOODS} >= 0, default 0;
param max_sale {GOODS} >= 0;

var Bake {g in GOODS} >= 0, <= max_sale[g];

maximize Revenue: sum {g in GOODS} price[g] * Bake[g];

subject to Limit {r in RESOURCES}: sum {g in GOODS} use[r,g] * Bake[g] <= cap[r];

data;

set GOODS := bread rolls cake pie ;
set RESOURCES := oven labor flour ;

param:  price  max_sale :=
  bread   3.0     120
  rolls   0.5     400
  cake   12.0      25
  pie     9.0      30 ;

param cap := oven 16  labor 20  flour 100 ;

param use:  bread  rolls  cake  pie :=
  oven      0.05   0.01   0.25  0.20
  labor     0.08   0.02   0.30  0.25
  flour     0.50   0.08    .    0.40 ;
