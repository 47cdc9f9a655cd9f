// The Python backend kind: a Backend whose forward() calls a Python function with the harness's
// tensors, in a CPython embedded in the worker. It imports the torch of the LibTorch the worker
// links (same libraries, one process), so a tensor crosses as itself: THPVariable_Wrap and
// THPVariable_Unpack, no copy. Everything Python costs per call is inside the timed call.
#include "python/bridge_api.hpp"

#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"

#include <attnbench/sdpa/autograd_backward.hpp>

#include <torch/csrc/autograd/python_variable.h>  // includes Python.h

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <boost/dll/alias.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness_py.inc"  // kHarnessSource: harness.py, embedded at build time

namespace attnbench {

namespace {

// The keywords every point has (besides q, k, v), whose values the bridge makes itself.
const std::vector<std::string> kCommonKeywords = {
    "causal", "scale", "mask", "problem", "q_scale", "k_scale", "v_scale",
    "cu_seqlens_q", "cu_seqlens_kv", "kv_lens", "page_table"};

// What a function may take: the common keywords, each variant's and each kind's named inputs
// (kinds/list.hpp): harness.KEYWORDS.
std::vector<std::string> all_keywords() {
  std::vector<std::string> out = kCommonKeywords;
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const ProblemVariant* v : problem_variants()) {
    for (const PythonKeyword& k : v->python_keywords()) add(k.name);
    for (const std::string& name : v->input_names()) add(name);
  }
  for (const ProblemKind* k : problem_kinds())
    for (const std::string& name : k->input_names()) add(name);
  return out;
}

// A variant's keyword or attribute named `name`, or null.
const PythonKeyword* variant_keyword(const std::string& name, bool attribute = false) {
  static const std::vector<PythonKeyword> keywords = [] {
    std::vector<PythonKeyword> out;
    for (const ProblemVariant* v : problem_variants())
      for (PythonKeyword& k : v->python_keywords()) out.push_back(std::move(k));
    return out;
  }();
  static const std::vector<PythonKeyword> attributes = [] {
    std::vector<PythonKeyword> out;
    for (const ProblemVariant* v : problem_variants())
      for (PythonKeyword& k : v->python_attributes()) out.push_back(std::move(k));
    return out;
  }();
  for (const PythonKeyword& k : attribute ? attributes : keywords)
    if (k.name == name) return &k;
  return nullptr;
}

// A variant's numbers as Python sees them: one number, or a tuple of them.
PyObject* python_numbers(const PythonKeyword& k, const Problem& p) {
  const std::vector<double> numbers = k.numbers(p);
  auto one = [&](double x) {
    return k.integers ? PyLong_FromLongLong(static_cast<long long>(x)) : PyFloat_FromDouble(x);
  };
  if (numbers.size() == 1) return one(numbers.front());
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(numbers.size()));
  for (size_t i = 0; i < numbers.size(); ++i)
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), one(numbers[i]));
  return tuple;
}

// An owned reference.
struct Ref {
  PyObject* p = nullptr;
  Ref() = default;
  explicit Ref(PyObject* owned) : p(owned) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& o) noexcept : p(o.p) { o.p = nullptr; }
  Ref& operator=(Ref&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~Ref() { Py_XDECREF(p); }
  explicit operator bool() const { return p != nullptr; }
};

// A Python str as UTF-8, whatever it holds: a lone surrogate (from a file name, an exception's
// text) becomes its \udcff escape instead of an encoding error (PyUnicode_AsUTF8's null).
std::string utf8(PyObject* text) {
  Ref bytes(PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace"));
  if (!bytes) {
    PyErr_Clear();
    return "(text that cannot be encoded)";
  }
  return std::string(PyBytes_AsString(bytes.p), static_cast<size_t>(PyBytes_Size(bytes.p)));
}

// Holds the GIL for a scope; released between calls so that autograd's threads (which run a
// compiled function's backward in Python) can take it.
struct Gil {
  PyGILState_STATE state = PyGILState_Ensure();
  ~Gil() { PyGILState_Release(state); }
};

// The exception CPython has set, as one line that names the user's frame (harness.describe), and
// whether it was NotImplementedError: the backend's way to say "not this problem".
struct PythonError {
  std::string text;
  bool not_implemented = false;
};

PythonError take_error(PyObject* harness, const std::string& file) {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  Ref t(type), v(value), tb(trace);
  if (!v) return {"an unknown Python error"};
  if (tb) PyException_SetTraceback(v.p, tb.p);
  PythonError out;
  out.not_implemented = PyErr_GivenExceptionMatches(v.p, PyExc_NotImplementedError) != 0;
  // Python's MemoryError says "out of memory" in the row, so the runner calls it `oom` as it
  // does PyTorch's (torch.OutOfMemoryError and the CPU allocator's RuntimeError say so already).
  const bool memory_error = PyErr_GivenExceptionMatches(v.p, PyExc_MemoryError) != 0;
  Ref path(PyBytes_FromStringAndSize(file.data(), static_cast<Py_ssize_t>(file.size())));
  Ref described(harness && path ? PyObject_CallMethod(harness, "describe", "OO", v.p, path.p)
                        : nullptr);
  if (described && PyUnicode_Check(described.p)) {
    out.text = utf8(described.p);
  } else {
    PyErr_Clear();
    Ref s(PyObject_Str(v.p));
    out.text = s ? utf8(s.p) : "an exception that cannot be printed";
  }
  if (memory_error) out.text = "out of memory: " + out.text;
  return out;
}

// Started once per process, on the first Python backend. Returns the harness module (borrowed)
// or throws with why Python could not start. The GIL is released on return.
PyObject* harness_module() {
  static PyObject* harness = nullptr;
  static std::string failed;
  if (harness) return harness;
  if (!failed.empty()) throw std::runtime_error(failed);
  // CPython came with this library, loaded locally; the extension modules it imports (torch._C)
  // expect its symbols global.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  // The interpreter whose torch this attnbench was built against: sys.prefix (its venv and
  // site-packages) follows from it, and sys.executable is a real python for the subprocesses
  // torch.compile starts. $ATTNBENCH_PYTHON names another.
  const char* env = std::getenv("ATTNBENCH_PYTHON");
  const std::string executable = env && *env ? env : ATTNBENCH_PYTHON_EXECUTABLE;
  // A name that is no program would start the embedded interpreter all the same, quietly with
  // the build's prefix: say so instead.
  if (env && *env && access(env, X_OK) != 0) {
    failed = std::string("$ATTNBENCH_PYTHON names ") + env +
             ", which is no executable file (unset it to use " + ATTNBENCH_PYTHON_EXECUTABLE +
             ")";
    throw std::runtime_error(failed);
  }
  if (env && *env) {  // an executable, but a Python 3? (another program would start us astray)
    const std::string ask =
        "'" + std::string(env) + "' -c 'import sys; print(sys.version_info[0])' 2>/dev/null";
    std::string answer;
    if (FILE* pipe = popen(ask.c_str(), "r")) {
      char buf[64];
      while (std::fgets(buf, sizeof buf, pipe)) answer += buf;
      pclose(pipe);
    }
    if (answer != "3\n") {
      failed = std::string("$ATTNBENCH_PYTHON names ") + env +
               ", which is no Python 3 interpreter (unset it to use " +
               ATTNBENCH_PYTHON_EXECUTABLE + ")";
      throw std::runtime_error(failed);
    }
  }
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // the worker's signals stay the worker's
  config.parse_argv = 0;
  PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, executable.c_str());
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    failed = "cannot start Python (" + executable +
             "): " + (status.err_msg ? status.err_msg : "no reason given");
    throw std::runtime_error(failed);
  }
  {
    Ref code(Py_CompileString(kHarnessSource, "attnbench/harness.py", Py_file_input));
    Ref module(code ? PyImport_ExecCodeModule("attnbench_harness", code.p) : nullptr);
    if (!module)
      failed = "Python started, but importing torch failed: " + take_error(nullptr, "").text;
    std::swap(harness, module.p);  // kept for the life of the process
  }
  if (harness) {  // the keywords a function may take, read off the lists of kinds and variants
    const std::vector<std::string> keywords = all_keywords();
    Ref tuple(PyTuple_New(static_cast<Py_ssize_t>(keywords.size())));
    for (size_t i = 0; i < keywords.size(); ++i)
      PyTuple_SET_ITEM(tuple.p, static_cast<Py_ssize_t>(i), PyUnicode_FromString(keywords[i].c_str()));
    Ref first(Py_BuildValue("(s)", problem_kinds().front()->name().c_str()));
    if (PyObject_SetAttrString(harness, "KEYWORDS", tuple.p) != 0 ||
        PyObject_SetAttrString(harness, "DEFAULT_KINDS", first.p) != 0)
      failed = "cannot set harness.KEYWORDS: " + take_error(nullptr, "").text;
  }
  PyEval_SaveThread();  // from here on every use of Python takes the GIL (Gil)
  if (!failed.empty()) throw std::runtime_error(failed);
  return harness;
}

bool same_problem(const Problem& a, const Problem& b) {
  for (const auto& f : problem_fields())
    if (f.get(a) != f.get(b)) return false;
  return a.q_lens == b.q_lens && a.kv_lens == b.kv_lens;
}

PyObject* python_list(const std::vector<int64_t>& values) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(values[i]));
  return list;
}

// A problem field's value as Python sees it: int, bool or str (a choice by its name); None for
// another kind's field.
PyObject* python_value(const FieldValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return Py_NewRef(Py_None);
  if (const int64_t* i = std::get_if<int64_t>(&value)) return PyLong_FromLongLong(*i);
  if (const bool* b = std::get_if<bool>(&value)) return PyBool_FromLong(*b);
  if (const double* d = std::get_if<double>(&value)) return PyFloat_FromDouble(*d);
  return PyUnicode_FromString(field_text(value).c_str());
}

class PythonBackend final : public Backend {
 public:
  PythonBackend(PythonFunctionRef ref, PyObject* harness, PyObject* loaded)
      : ref_(std::move(ref)), harness_(harness) {
    // loaded: (function, supports or None, description, keywords, kinds)
    fn_ = Ref(Py_NewRef(PyTuple_GetItem(loaded, 0)));
    PyObject* supports = PyTuple_GetItem(loaded, 1);
    if (supports != Py_None) supports_ = Ref(Py_NewRef(supports));
    description_ = utf8(PyTuple_GetItem(loaded, 2));
    PyObject* keywords = PyTuple_GetItem(loaded, 3);
    for (Py_ssize_t i = 0; i < PyList_Size(keywords); ++i)
      keywords_.emplace_back(utf8(PyList_GetItem(keywords, i)));
    PyObject* kinds = PyTuple_GetItem(loaded, 4);
    for (Py_ssize_t i = 0; i < PyList_Size(kinds); ++i)
      kinds_.emplace_back(utf8(PyList_GetItem(kinds, i)));
  }
  ~PythonBackend() override {
    Gil gil;
    fn_ = Ref(), supports_ = Ref(), problem_object_ = Ref();
  }

  std::string name() const override { return ref_.name; }
  std::string description() const override { return description_; }
  std::vector<std::string> kinds() const override { return kinds_; }
  // Every variant: each reaches the function as keywords, checked keyword by keyword in
  // supports(), with the keyword named.
  std::vector<std::string> variants() const override {
    std::vector<std::string> out;
    for (const ProblemVariant* v : problem_variants())
      if (v->declared()) out.push_back(v->name());
    return out;
  }

  Support supports(const Problem& problem) const override {
    // A variant reaches the function as keywords; one it does not take would be dropped silently.
    auto refuse = [&](const std::string& what, const std::string& keys, size_t count = 1) {
      return Support::no(ref_.function + "() takes no " + keys +
                         (count > 1 ? " keywords" : " keyword") + ", so it cannot run " + what +
                         " (docs/backends.md lists the keywords)");
    };
    for (const ProblemVariant* v : variants_of(problem)) {
      std::string missing;
      size_t count = 0;
      for (const std::string& need : v->python_needs())
        if (!takes(need)) missing += (count++ ? " and " : "") + need;
      if (!count || (v->mask_serves() && !problem.packed() && takes("mask"))) continue;
      return refuse(v->words(), missing + (v->mask_serves() ? " (or mask)" : ""), count);
    }
    for (const std::string& input : kind_of(problem).input_names())
      if (!takes(input)) return refuse("kind " + problem.kind, input);
    if (!supports_) return Support::yes();
    Gil gil;
    Ref answer(PyObject_CallOneArg(supports_.p, problem_object(problem)));
    if (!answer) {
      const PythonError e = take_error(harness_, ref_.file);
      throw std::runtime_error("supports() raised " + e.text);
    }
    // True or None: yes. False: no. A string: no, and that is the reason. (False, "why") too.
    if (answer.p == Py_None || answer.p == Py_True) return Support::yes();
    if (PyUnicode_Check(answer.p)) {
      const std::string why = utf8(answer.p);
      return Support::no(why.empty() ? "supports() said no with an empty reason (return a "
                                       "reason a user can act on)"
                                     : why);
    }
    if (PyTuple_Check(answer.p) && PyTuple_Size(answer.p) == 2 &&
        !PyObject_IsTrue(PyTuple_GetItem(answer.p, 0))) {
      Ref why(PyObject_Str(PyTuple_GetItem(answer.p, 1)));
      return Support::no(why ? utf8(why.p) : "supports() said no");
    }
    if (answer.p == Py_False) return Support::no("supports() returned False");
    // Anything else (a tensor, a number, a list) is no answer: truthiness would make a tensor a yes.
    throw std::runtime_error("supports() returned a " + std::string(Py_TYPE(answer.p)->tp_name) +
                             "; return True, None, False, a reason (str) or (False, reason)");
  }

  at::Tensor forward(const Inputs& inputs) override { return call(inputs, Direction::fwd); }

  // Autograd records the Python function's graph (a torch.compile'd one's too) and replays it.
  std::unique_ptr<BackwardPass> prepare_backward(const Inputs& inputs) override {
    return autograd_backward(inputs, [this](const Inputs& in) { return call(in, Direction::bwd); });
  }

 private:
  bool takes(const std::string& keyword) const {
    return std::find(keywords_.begin(), keywords_.end(), keyword) != keywords_.end();
  }

  at::Tensor call(const Inputs& in, Direction direction) {
    // Forward points run in inference mode (runner.cpp). A Python function runs outside it, with
    // autograd off: what it keeps between calls (a block mask cached per shape, say) is then an
    // ordinary tensor that a backward point at the same shape may save for its backward.
    std::optional<c10::InferenceMode> outside_inference_mode;
    std::optional<c10::AutoGradMode> no_grad;
    if (direction == Direction::fwd) outside_inference_mode.emplace(false), no_grad.emplace(false);
    Gil gil;
    Problem problem = in.problem;
    problem.direction = direction;
    Ref args(PyTuple_New(3));
    PyTuple_SET_ITEM(args.p, 0, THPVariable_Wrap(in.q));
    PyTuple_SET_ITEM(args.p, 1, THPVariable_Wrap(in.k));
    PyTuple_SET_ITEM(args.p, 2, THPVariable_Wrap(in.v));
    Ref kwargs(PyDict_New());
    for (const std::string& key : keywords_) {
      Ref value;
      if (key == "causal")
        value = Ref(PyBool_FromLong(problem.causal));
      else if (key == "scale")
        value = Ref(PyFloat_FromDouble(in.scale));
      else if (key == "mask")
        value = Ref(in.mask ? THPVariable_Wrap(*in.mask) : Py_NewRef(Py_None));
      else if (key == "cu_seqlens_q" || key == "cu_seqlens_kv" || key == "kv_lens" ||
               key == "page_table") {
        const at::Tensor* t = key == "cu_seqlens_q"    ? in.cu_seqlens_q
                              : key == "cu_seqlens_kv" ? in.cu_seqlens_kv
                              : key == "kv_lens"       ? in.kv_lens
                                                       : in.page_table;
        value = Ref(t ? THPVariable_Wrap(*t) : Py_NewRef(Py_None));
      } else if (const PythonKeyword* k = variant_keyword(key); k && k->numbers)
        value = Ref(python_numbers(*k, problem));  // a window's (left, right), a softcap, ...
      else if (key == "problem")
        value = Ref(Py_NewRef(problem_object(problem)));
      else if (key == "q_scale")
        value = Ref(PyFloat_FromDouble(in.q_scale));
      else if (key == "k_scale")
        value = Ref(PyFloat_FromDouble(in.k_scale));
      else if (key == "v_scale")
        value = Ref(PyFloat_FromDouble(in.v_scale));
      else  // a kind's or variant's named input (sinks, indices), None where the point has none
        value = Ref(in.input(key) ? THPVariable_Wrap(*in.input(key)) : Py_NewRef(Py_None));
      if (value) PyDict_SetItemString(kwargs.p, key.c_str(), value.p);
    }
    Ref out(PyObject_Call(fn_.p, args.p, kwargs.p));
    if (!out) {
      const PythonError e = take_error(harness_, ref_.file);
      if (e.not_implemented) throw Unsupported(e.text);
      throw std::runtime_error(e.text);
    }
    if (!THPVariable_Check(out.p))
      throw std::runtime_error(ref_.function + "() returned an object of type " +
                               Py_TYPE(out.p)->tp_name + ", not a torch.Tensor");
    return THPVariable_Unpack(out.p);
  }

  // The Problem as Python sees it, made once per problem (a call must not pay for it each time).
  PyObject* problem_object(const Problem& p) const {
    if (problem_object_ && same_problem(p, problem_)) return problem_object_.p;
    // harness.problem(**fields): every field of the table, by its name.
    Ref fields(PyDict_New()), make(PyObject_GetAttrString(harness_, "problem")),
        none(PyTuple_New(0));
    for (const auto& f : problem_fields()) {
      Ref value(python_value(f.get(p)));
      if (fields && value) PyDict_SetItemString(fields.p, f.name.c_str(), value.p);
    }
    // The drawn lengths (one per sequence; empty: uniform) and the variants' attributes.
    for (const auto& [name, lens] : {std::pair{"q_lens", &p.q_lens}, {"kv_lens", &p.kv_lens}}) {
      Ref value(python_list(*lens));
      if (fields && value) PyDict_SetItemString(fields.p, name, value.p);
    }
    for (const ProblemVariant* v : problem_variants())
      for (const PythonKeyword& k : v->python_attributes()) {
        Ref value(python_numbers(k, p));
        if (fields && value) PyDict_SetItemString(fields.p, k.name.c_str(), value.p);
      }
    Ref made(fields && make && none ? PyObject_Call(make.p, none.p, fields.p) : nullptr);
    if (!made)
      throw std::runtime_error("attnbench's harness.problem failed: " +
                               take_error(nullptr, "").text);
    problem_ = p;
    problem_object_ = std::move(made);
    return problem_object_.p;
  }

  PythonFunctionRef ref_;
  PyObject* harness_;  // borrowed: lives as long as the process
  Ref fn_, supports_;
  std::string description_;
  std::vector<std::string> keywords_;  // of harness.KEYWORDS, those the function takes
  std::vector<std::string> kinds_;     // the problem kinds it runs
  mutable Problem problem_;
  mutable Ref problem_object_;
};

PythonBackendMade make_python_backend(const PythonFunctionRef& ref) {
  PythonBackendMade made;
  PyObject* harness = nullptr;
  try {
    harness = harness_module();
  } catch (const std::exception& e) {
    made.error = e.what();
    return made;
  }
  Gil gil;
  // The path as bytes (harness.load decodes it as the file system does): one that is not UTF-8
  // still names its file.
  Ref path(PyBytes_FromStringAndSize(ref.file.data(), static_cast<Py_ssize_t>(ref.file.size())));
  Ref loaded(path ? PyObject_CallMethod(harness, "load", "Os", path.p, ref.function.c_str())
                  : nullptr);
  if (!loaded) {
    made.error = "raised while importing: " + take_error(harness, ref.file).text;
  } else if (PyUnicode_Check(loaded.p)) {
    made.no_such_function = true;
    made.error = utf8(loaded.p);
  } else {
    made.backend = std::make_unique<PythonBackend>(ref, harness, loaded.p);
  }
  return made;
}

}  // namespace

}  // namespace attnbench

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_python_bridge_version;
const int attnbench_python_bridge_version = attnbench::kPythonBridgeVersion;
BOOST_DLL_ALIAS(attnbench::make_python_backend, attnbench_make_python_backend)
