# Lasso regression: least squares plus an L1 penalty, written as a sum of squared residuals
# and a sum of `abs` — a QP for HiGHS once the absolute values become epigraph rows.
set OBS;
set FEAT;
param X {OBS, FEAT};
param y {OBS};
param lam >= 0;

var b {FEAT};
var r {OBS};

minimize Fit: sum {i in OBS} r[i]^2 + lam * sum {j in FEAT} abs(b[j]);

s.t. Residual {i in OBS}: r[i] = y[i] - sum {j in FEAT} X[i,j] * b[j];
