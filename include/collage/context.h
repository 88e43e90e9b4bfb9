// Context: owns the registries and shared services (operators, later backends and thread pools).
// There is no global state; every entry point takes a Context.
#pragma once

#include "collage/op.h"

namespace collage {

class Context {
 public:
  // A context with every built-in operator registered.
  Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  OpRegistry& ops() { return ops_; }
  const OpRegistry& ops() const { return ops_; }

 private:
  OpRegistry ops_;
};

}  // namespace collage
