// A failed collage_status_t raised as the Python package's exception (collage.Error, of the
// subclass for its code): shared by the extension modules.
#ifndef COLLAGE_PYTHON_STATUS_H_
#define COLLAGE_PYTHON_STATUS_H_

#include <nanobind/nanobind.h>

#include <string>

#include "collage/runtime.h"

namespace collage_python {

// Frees `status` and throws nb::python_error carrying collage._errors.from_status(code,
// message); returns when `status` is NULL (success). Needs the GIL.
inline void check(collage_status_t* status) {
  namespace nb = nanobind;
  if (!status) return;
  const int32_t code = collage_status_code(status);
  const std::string message = collage_status_message(status);
  collage_status_free(status);
  nb::object error = nb::module_::import_("collage._errors").attr("from_status")(code, message);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

}  // namespace collage_python

#endif  // COLLAGE_PYTHON_STATUS_H_
