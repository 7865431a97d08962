# Staffing over ordered weeks: permanent staff is hired and let go week by week; temporary
# contracts run three consecutive weeks (the start week, prev(t) and prev(t, WEEKS, 2) cover
# week t). Staff may shrink by at most `shrink` over two weeks: a rule written with next(t, S, 2).
set WEEKS ordered;
param need {WEEKS} >= 0;
param staff0 >= 0;
param wage > 0;
param hire_cost >= 0;
param fire_cost >= 0;
param temp_cost > 0;
param shrink >= 0, <= 1;

var Staff {WEEKS} >= 0;
var Hire {WEEKS} >= 0;
var Fire {WEEKS} >= 0;
var Temp {WEEKS} >= 0;

minimize Cost: sum {t in WEEKS}
   (wage * Staff[t] + hire_cost * Hire[t] + fire_cost * Fire[t] + temp_cost * Temp[t]);

s.t. Roll {t in WEEKS}:
   Staff[t] = (if ord(t) = 1 then staff0 else Staff[prev(t)]) + Hire[t] - Fire[t];

s.t. Cover {t in WEEKS}:
   Staff[t] + Temp[t]
   + (if ord(t) >= 2 then Temp[prev(t, WEEKS)] else 0)
   + (if ord(t) >= 3 then Temp[prev(t, WEEKS, 2)] else 0) >= need[t];

s.t. Slow_Shrink {t in WEEKS: ord(t) <= card(WEEKS) - 2}:
   Staff[next(t, WEEKS, 2)] >= (1 - shrink) * Staff[t];

s.t. No_Late_Start {t in WEEKS: ord(t) >= card(WEEKS) - 1}: Temp[t] <= need[t];
