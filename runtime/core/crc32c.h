// CRC-32C (Castagnoli), the checksum of artifact headers and sections.
#pragma once

#include <cstddef>
#include <cstdint>

namespace collage::artifact {

// CRC-32C of `size` bytes, continuing from `crc` (0 to start). Uses the SSE 4.2 instruction when
// the CPU has it, a table-driven loop otherwise; both give the same result.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace collage::artifact
