// StringSink: an output stream buffer writing into a std::string, for records of hundreds of
// MiB that an ostringstream would copy at each doubling of its buffer.
#pragma once

#include <algorithm>
#include <cstring>
#include <ios>
#include <streambuf>
#include <string>

namespace collage::rt_openvino {

// An output stream writing into a string the caller reserved: the weights and the export of a
// large region (GPT-2's: 620 MiB each) are written once, not copied at each doubling of an
// ostringstream's buffer. Seeks within what was written (a serializer that patches its header
// afterwards) overwrite in place.
class StringSink : public std::streambuf {
 public:
  explicit StringSink(std::string& out) : out_(out), pos_(out.size()) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const size_t count = static_cast<size_t>(n);
    const size_t over = std::min(count, out_.size() - pos_);
    if (over > 0) std::memcpy(out_.data() + pos_, s, over);
    if (count > over) out_.append(s + over, count - over);
    pos_ += count;
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override {
    if (!(which & std::ios_base::out)) return pos_type(off_type(-1));
    const off_type base = dir == std::ios_base::beg   ? 0
                          : dir == std::ios_base::cur ? static_cast<off_type>(pos_)
                                                      : static_cast<off_type>(out_.size());
    const off_type to = base + off;
    if (to < 0 || to > static_cast<off_type>(out_.size())) return pos_type(off_type(-1));
    pos_ = static_cast<size_t>(to);
    return pos_type(to);
  }
  pos_type seekpos(pos_type to, std::ios_base::openmode which) override {
    return seekoff(off_type(to), std::ios_base::beg, which);
  }

 private:
  std::string& out_;
  size_t pos_;  // where the next byte goes
};

}  // namespace collage::rt_openvino
