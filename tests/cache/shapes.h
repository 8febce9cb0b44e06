/* Shared-cache tests: the header both translation units include (found through -I). */
#ifndef RF_SHAPES_H
#define RF_SHAPES_H
#define RF_BORDER 2
struct rf_rect { int w, h; };
#endif
