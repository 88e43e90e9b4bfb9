// Floating-point formatting for str_cat.
#include "core/str_cat.h"

#include <cstdio>

namespace collage::detail {

void append_piece(std::string& s, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  s.append(buf);
}

}  // namespace collage::detail
