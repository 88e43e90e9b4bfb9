// Memory layouts of the dnnl module: stored constant layouts <-> oneDNN memory descriptors, with
// the checks that make a layout read from an artifact safe to hand to oneDNN.
#include <cstring>

#include "dnnl_kernel.h"

namespace collage::rt_dnnl {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 40;  // per-axis sizes and strides

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace

dnnl::memory::data_type dnnl_type(int32_t dtype) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32:
      return dnnl::memory::data_type::f32;
    case COLLAGE_DTYPE_F16:
      return dnnl::memory::data_type::f16;
    case COLLAGE_DTYPE_BF16:
      return dnnl::memory::data_type::bf16;
    case COLLAGE_DTYPE_I8:
      return dnnl::memory::data_type::s8;
    case COLLAGE_DTYPE_I32:
      return dnnl::memory::data_type::s32;
    case COLLAGE_DTYPE_BOOL:
    case COLLAGE_DTYPE_U8:
      return dnnl::memory::data_type::u8;
    default:
      throw ParamError("element type " + std::to_string(dtype) + " has no oneDNN type");
  }
}

size_t dtype_bytes(int32_t dtype) {
  const size_t bytes = collage_dtype_size(dtype);
  if (bytes == 0) throw ParamError("unknown element type " + std::to_string(dtype));
  return bytes;
}

dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt,
                            bool transposed) {
  const size_t n = dims.size();
  require(n >= 1 && n <= kMaxRank, "rank " + std::to_string(n) + " is not in 1..12");
  for (int64_t d : dims)
    require(d >= 1 && d <= kMaxExtent, "dims " + list_text(dims) + " must be positive");
  require(!transposed || n >= 2, "a transposed operand needs rank >= 2");
  unsigned __int128 bytes = dnnl::memory::data_type_size(dt);
  for (int64_t d : dims) bytes *= static_cast<uint64_t>(d);
  require(bytes < (static_cast<unsigned __int128>(1) << 62),
          "dims " + list_text(dims) + " too large");
  // Row-major strides of the stored axis order, then mapped back to the logical axes.
  std::vector<int64_t> order(dims), strides(n, 1);
  if (transposed) std::swap(order[n - 1], order[n - 2]);
  for (size_t i = n; i-- > 1;) strides[i - 1] = strides[i] * order[i];
  if (transposed) std::swap(strides[n - 1], strides[n - 2]);
  return dnnl::memory::desc(dims, dt, strides);
}

dnnl::memory::desc blocked_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt,
                              int64_t c_block) {
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc plain = plain_md(dims, dt);
  const size_t n = dims.size();
  require(n >= 3 && n <= 5, "a channel-blocked operand needs rank 3 to 5, not " +
                                std::to_string(n));
  require(c_block == 8 || c_block == 16,
          "channel block " + std::to_string(c_block) + " (the module takes 8 and 16)");
  require(dims[1] % c_block == 0, "dims " + list_text(dims) + " do not split into blocks of " +
                                      std::to_string(c_block) + " channels");
  static constexpr tag k8[] = {tag::nCw8c, tag::nChw8c, tag::nCdhw8c};
  static constexpr tag k16[] = {tag::nCw16c, tag::nChw16c, tag::nCdhw16c};
  return dnnl::memory::desc(plain.dims(), dt, (c_block == 8 ? k8 : k16)[n - 3]);
}

Layout layout_of(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  require(d.format_kind == dnnl_blocked, "a layout that is not blocked cannot be stored");
  require(d.extra.flags == 0 && d.offset0 == 0, "a layout with extra data cannot be stored");
  Layout l;
  for (int i = 0; i < d.ndims; ++i) {
    require(d.padded_offsets[i] == 0, "a layout with padded offsets cannot be stored");
    l.dims.push_back(d.dims[i]);
    l.padded_dims.push_back(d.padded_dims[i]);
    l.strides.push_back(d.format_desc.blocking.strides[i]);
  }
  for (int i = 0; i < d.format_desc.blocking.inner_nblks; ++i) {
    l.inner_blks.push_back(d.format_desc.blocking.inner_blks[i]);
    l.inner_idxs.push_back(d.format_desc.blocking.inner_idxs[i]);
  }
  return l;
}

size_t layout_bytes(const dnnl::memory::desc& md) {
  // oneDNN's own size, or the last addressed element, whichever is larger.
  const dnnl_memory_desc_t& d = md.data;
  size_t bytes = md.get_size();
  if (d.format_kind != dnnl_blocked) return bytes;
  const auto& b = d.format_desc.blocking;
  int64_t block[DNNL_MAX_NDIMS];
  for (int i = 0; i < d.ndims; ++i) block[i] = 1;
  int64_t inner = 1;
  for (int i = 0; i < b.inner_nblks; ++i) {
    block[b.inner_idxs[i]] *= b.inner_blks[i];
    inner *= b.inner_blks[i];
  }
  unsigned __int128 last = static_cast<unsigned __int128>(inner - 1);
  for (int i = 0; i < d.ndims; ++i)
    last += static_cast<unsigned __int128>(d.padded_dims[i] / block[i] - 1) *
            static_cast<unsigned __int128>(b.strides[i]);
  const unsigned __int128 extent =
      (last + 1) * dnnl::memory::data_type_size(static_cast<dnnl::memory::data_type>(d.data_type));
  require(extent < (static_cast<unsigned __int128>(1) << 62), "layout too large");
  return std::max(bytes, static_cast<size_t>(extent));
}

dnnl::memory::desc layout_md(const Layout& l, dnnl::memory::data_type dt, size_t buffer_bytes) {
  const size_t n = l.dims.size();
  require(n >= 1 && n <= kMaxRank, "layout rank " + std::to_string(n) + " is not in 1..12");
  require(l.padded_dims.size() == n && l.strides.size() == n,
          "layout padded_dims and strides must have one value per axis");
  require(l.inner_blks.size() == l.inner_idxs.size() && l.inner_blks.size() <= kMaxRank,
          "layout inner blocks and their axes must pair up");
  std::vector<int64_t> block(n, 1);
  for (size_t i = 0; i < l.inner_blks.size(); ++i) {
    const int64_t axis = l.inner_idxs[i], blk = l.inner_blks[i];
    require(axis >= 0 && static_cast<size_t>(axis) < n, "layout inner block on a missing axis");
    require(blk >= 1 && blk <= 4096, "layout inner block size " + std::to_string(blk));
    block[axis] *= blk;
    require(block[axis] <= kMaxExtent, "layout inner blocks too large");
  }
  for (size_t i = 0; i < n; ++i) {
    require(l.dims[i] >= 1 && l.dims[i] <= kMaxExtent,
            "layout dims " + list_text(l.dims) + " must be positive");
    require(l.padded_dims[i] >= l.dims[i] && l.padded_dims[i] <= kMaxExtent &&
                l.padded_dims[i] % block[i] == 0,
            "layout padded dims " + list_text(l.padded_dims) + " do not fit dims " +
                list_text(l.dims) + " and the inner blocks");
    require(l.strides[i] >= 1 && l.strides[i] <= kMaxExtent,
            "layout strides " + list_text(l.strides) + " out of range");
  }
  // Every padded element must have room of its own: overlapping strides would let a small
  // buffer stand for a huge tensor.
  unsigned __int128 padded_bytes = dnnl::memory::data_type_size(dt);
  for (int64_t p : l.padded_dims) {
    padded_bytes *= static_cast<uint64_t>(p);
    require(padded_bytes <= buffer_bytes,
            "layout of dims " + list_text(l.dims) + " has more elements than its constant");
  }
  dnnl_memory_desc_t d;
  std::memset(&d, 0, sizeof d);
  d.ndims = static_cast<int>(n);
  d.data_type = static_cast<dnnl_data_type_t>(dt);
  d.format_kind = dnnl_blocked;
  for (size_t i = 0; i < n; ++i) {
    d.dims[i] = l.dims[i];
    d.padded_dims[i] = l.padded_dims[i];
    d.format_desc.blocking.strides[i] = l.strides[i];
  }
  d.format_desc.blocking.inner_nblks = static_cast<int>(l.inner_blks.size());
  for (size_t i = 0; i < l.inner_blks.size(); ++i) {
    d.format_desc.blocking.inner_blks[i] = l.inner_blks[i];
    d.format_desc.blocking.inner_idxs[i] = l.inner_idxs[i];
  }
  dnnl::memory::desc md(d);
  const size_t need = layout_bytes(md);
  require(need <= buffer_bytes, "layout of dims " + list_text(l.dims) + " needs " +
                                    std::to_string(need) + " bytes, the constant has " +
                                    std::to_string(buffer_bytes));
  return md;
}

}  // namespace collage::rt_dnnl
