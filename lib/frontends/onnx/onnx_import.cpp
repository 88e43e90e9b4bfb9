// Entry points of the ONNX frontend: protobuf parsing, model-level checks (opsets), error context.
#include "collage/onnx.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_graph.h"
#include "frontends/onnx/onnx_op_history.h"

namespace collage {
namespace {

// Parses a whole stream as a ModelProto. Protobuf's default 64 MB cap is lifted to its hard
// 2 GiB maximum, so models with inline weights of several hundred MB load.
bool parse_model(google::protobuf::io::ZeroCopyInputStream& in, onnx::ModelProto& model) {
  google::protobuf::io::CodedInputStream coded(&in);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

// The opset of the default domain, at most the newest the operator version table knows (each
// node's operator version is resolved and checked as the node is imported). A model none of
// whose nodes is in the default domain need not import it (onnxmltools exports a tree ensemble
// with only ai.onnx.ml); it is read with the newest known opset.
absl::StatusOr<int> default_opset(const onnx::ModelProto& model) {
  int opset = -1;
  for (const auto& id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") opset = static_cast<int>(id.version());
  }
  if (opset < 0) {
    for (const onnx::NodeProto& node : model.graph().node())
      if (node.domain().empty() || node.domain() == "ai.onnx")
        return absl::InvalidArgumentError(
            str_cat("the model imports no opset of the default ONNX domain, which node '",
                    node.name().empty() ? node.op_type() : node.name(), "' (", node.op_type(),
                    ") is in"));
    return onnx_import::newest_known_opset("");
  }
  if (opset < 1)
    return absl::InvalidArgumentError(
        str_cat("the model imports opset ", opset, " of the default ONNX domain"));
  if (opset > onnx_import::newest_known_opset(""))
    return absl::UnimplementedError(
        str_cat("the model uses opset ", opset, " of the default ONNX domain; the newest collage "
                "knows is ", onnx_import::newest_known_opset(""),
                " (convert it with onnx.version_converter)"));
  return opset;
}

absl::StatusOr<Graph> import_model(const Context& ctx, onnx::ModelProto& model,
                                   const OnnxImportOptions& options,
                                   onnx_import::TensorSource source) {
  const std::string label = source.model_label;
  auto in_model = [&](const absl::Status& s) {
    return absl::Status(s.code(), str_cat(s.message(), " in ", label));
  };
  if (!model.has_graph())
    return in_model(absl::InvalidArgumentError("not an ONNX model: it has no graph"));
  auto opset = default_opset(model);
  if (!opset.ok()) return in_model(opset.status());
  onnx_import::GraphImporter importer(ctx, *model.mutable_graph(), *opset, options,
                                      std::move(source));
  auto g = importer.run();
  if (!g.ok()) return in_model(g.status());
  return g;
}

}  // namespace

absl::StatusOr<Graph> import_onnx_file(const Context& ctx, const std::filesystem::path& path,
                                       const OnnxImportOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return absl::InvalidArgumentError(
        str_cat("cannot read ONNX model '", path.string(), "': it is a directory"));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg =
        str_cat("cannot open ONNX model '", path.string(), "': ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::InvalidArgumentError(msg);
  }
  onnx::ModelProto model;
  bool parsed;
  struct stat st;
  void* mapped = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      st.st_size <= std::numeric_limits<int>::max())
    mapped = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapped != MAP_FAILED) {
    // The whole file in view: protobuf copies each initializer's bytes once, at their size,
    // where reading through a stream's small buffers grows them piece by piece.
    ::close(fd);
    madvise(mapped, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    google::protobuf::io::ArrayInputStream stream(mapped, static_cast<int>(st.st_size));
    parsed = parse_model(stream, model);
    munmap(mapped, static_cast<size_t>(st.st_size));
  } else {
    google::protobuf::io::FileInputStream stream(fd);
    stream.SetCloseOnDelete(true);
    parsed = parse_model(stream, model);
  }
  if (!parsed)
    return absl::InvalidArgumentError(
        str_cat("cannot parse '", path.string(),
                "' as an ONNX model: the file is truncated, corrupt or not a protobuf (or larger "
                "than protobuf's 2 GiB limit; store the weights as external data)"));
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  return import_model(ctx, model, options, {dir, path.string()});
}

absl::StatusOr<Graph> import_onnx_buffer(const Context& ctx, std::span<const uint8_t> bytes,
                                         const OnnxImportOptions& options,
                                         const std::filesystem::path& base_dir) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return absl::InvalidArgumentError(
        "ONNX model buffer is larger than protobuf's 2 GiB limit; store the weights as external "
        "data");
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  if (!parse_model(stream, model))
    return absl::InvalidArgumentError(
        "cannot parse the ONNX model buffer: it is truncated, corrupt or not a protobuf");
  return import_model(ctx, model, options, {base_dir, "the model buffer"});
}

}  // namespace collage
