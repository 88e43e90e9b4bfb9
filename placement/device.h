// The device fingerprint that keys the cost database: CPU model, core count and ISA flags.
#pragma once

#include <string>
#include <string_view>

namespace collage {

// "<model name>|<cores> cores|<flags>" from the text of /proc/cpuinfo: the first "model name",
// `cores`, and the ISA extensions among the first "flags" line that change kernel speed (SSE4,
// AVX, AVX2, AVX-512 subsets, FMA, F16C, AMX, VNNI, BF16), sorted. Unknown fields read as "?".
std::string device_fingerprint_from_cpuinfo(std::string_view cpuinfo, int cores);

}  // namespace collage
