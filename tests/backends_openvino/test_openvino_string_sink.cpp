// StringSink (runtime/modules/openvino/string_sink.h), which the openvino record writes its
// weights and export through: appends without reallocating what the caller reserved, and a
// seek back (a serializer patching its header) overwrites in place.
#include <catch2/catch.hpp>
#include <ostream>
#include <string>

#include "string_sink.h"

using collage::rt_openvino::StringSink;

TEST_CASE("string sink: appends into the reserved string, seeks overwrite in place",
          "[openvino][record]") {
  std::string out;
  out.reserve(64);
  const char* const data = out.data();
  {
    StringSink sink(out);
    std::ostream os(&sink);
    os << "header__";
    os.write("payload", 7);
    os.put('!');
    CHECK(os.tellp() == 16);
    os.seekp(6);  // patch the header's last two bytes
    os.write("42", 2);
    CHECK(os.tellp() == 8);
    os.seekp(0, std::ios_base::end);
    os << "tail";
    os.seekp(18);
    os.write("XYZW", 4);  // overwrites two bytes, appends the other two
    CHECK(os.good());
    os.seekp(100);  // past the end: refused
    CHECK(os.fail());
  }
  CHECK(out == "header42payload!taXYZW");
  CHECK(out.data() == data);  // never reallocated
}
