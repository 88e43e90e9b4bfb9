// A table of a library's entry points, the library opened at run time (dlopen) and never closed:
// the CUDA driver, cuBLAS and cuDNN are loaded this way, once per process, so that the module
// loads on machines without them and says which one is missing.
#pragma once

#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace collage::rt_cuda {

template <class Table>
struct LoadedTable {
  Table table;
  std::string why;  // empty when the library is usable
};

// Opens `library` and lets `resolve(table, sym)` fill the table, where `sym(fn, "name")` sets the
// function pointer `fn` to the entry point `name`. When the library does not open, `why` is
// "<not_found>: cannot load <library> (<dlerror>)"; when an entry point is missing, "<what>
// <library> lacks entry point <name>". The result is never freed (the library stays loaded).
template <class Table, class Resolve>
LoadedTable<Table>* load_table(const char* what, const char* not_found, const std::string& library,
                               Resolve resolve) {
  auto* l = new LoadedTable<Table>;
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    l->why = std::string(not_found) + ": cannot load " + library + " (" + (e ? e : "unknown") + ")";
    return l;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && l->why.empty())
      l->why = std::string(what) + " " + library + " lacks entry point " + name;
  };
  resolve(l->table, sym);
  return l;
}

// The table of `loaded`, or null with `*why` set (when `why` is not null).
template <class Table>
const Table* usable_table(const LoadedTable<Table>* loaded, std::string* why) {
  if (loaded->why.empty()) return &loaded->table;
  if (why) *why = loaded->why;
  return nullptr;
}

}  // namespace collage::rt_cuda
