# Unit commitment over ordered hours: units are on or off, pay a start-up cost when switched
# on, produce between their limits when on, and ramp up at most `ramp` per hour. Hour
# first(HOURS) starts from the units' initial state.
set UNITS;
set HOURS ordered;

param pmin {UNITS} >= 0;
param pmax {g in UNITS} >= pmin[g];
param mcost {UNITS} >= 0;
param noload {UNITS} >= 0;
param startup {UNITS} >= 0;
param ramp {UNITS} > 0;
param on0 {UNITS} binary, default 0;
param p0 {g in UNITS} >= 0, <= pmax[g], default 0;
param demand {HOURS} >= 0;
param reserve >= 0, <= 1;

var On {UNITS, HOURS} binary;
var Start {UNITS, HOURS} binary;
var Power {UNITS, HOURS} >= 0;

minimize Cost: sum {g in UNITS, t in HOURS}
   (mcost[g] * Power[g,t] + noload[g] * On[g,t] + startup[g] * Start[g,t]);

s.t. Demand {t in HOURS}: sum {g in UNITS} Power[g,t] = demand[t];
s.t. Spinning {t in HOURS}: sum {g in UNITS} pmax[g] * On[g,t] >= (1 + reserve) * demand[t];
s.t. Lower {g in UNITS, t in HOURS}: Power[g,t] >= pmin[g] * On[g,t];
s.t. Upper {g in UNITS, t in HOURS}: Power[g,t] <= pmax[g] * On[g,t];
s.t. Start_First {g in UNITS}: Start[g, first(HOURS)] >= On[g, first(HOURS)] - on0[g];
s.t. Start_Next {g in UNITS, t in HOURS: t <> first(HOURS)}: Start[g,t] >= On[g,t] - On[g,prev(t)];
s.t. Ramp_First {g in UNITS}: Power[g, first(HOURS)] - p0[g] <= ramp[g];
s.t. Ramp_Next {g in UNITS, t in HOURS: ord(t) > 1}: Power[g,t] - Power[g,prev(t, HOURS)] <= ramp[g];
