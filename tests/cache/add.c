/* Shared-cache tests: a C translation unit with a header from an include directory. */
#include "shapes.h"

int rf_area(struct rf_rect r) { return r.w * r.h + RF_BORDER; }
