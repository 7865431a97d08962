# Cutting stock over fixed patterns: cut raw rolls by patterns to meet orders for each width
# with as few rolls as possible. Widths are numbers used in arithmetic; each pattern is
# checked to fit the roll.
param roll_width > 0;
set WIDTHS;
param orders {WIDTHS} > 0;
param nPAT integer >= 0;
set PATTERNS = 1..nPAT;
param rolls {WIDTHS, PATTERNS} >= 0, integer, default 0;

check {j in PATTERNS}: sum {i in WIDTHS} i * rolls[i,j] <= roll_width;

var Cut {PATTERNS} integer >= 0;

minimize Number: sum {j in PATTERNS} Cut[j];

subject to Fill {i in WIDTHS}: sum {j in PATTERNS} rolls[i,j] * Cut[j] >= orders[i];
