"""Tree-ensemble benchmark: collage against XGBoost, LightGBM, ONNX Runtime and treelite/tl2cgen.

    .venv/bin/python bench/trees/trees_bench.py [--build build] [--rounds 7] [--batches 1,10000,100000]
                                                [--target avx2] [--nan-fraction 0.1]

Trains (or loads from --workdir) 500 trees of depth 8 on 28 features for three tasks: regression,
binary and 10-class (50 rounds x 10 classes), with XGBoost and LightGBM. Each model is compiled
by collage (libcollage_compiler through examples/python/collage.py, default placement) into one
artifact per batch size (greedy placement on the trees and Eigen backends), and so is the
onnxmltools ONNX-ML export of the XGBoost model (its node's strategy measured, and printed), run by
libcollage_runtime with 2 threads. In one process the contenders
are then timed in turn, round after round (alternating, so that load drifts hit all alike): per
round each contender makes a series of back-to-back calls (5 up to batch 10,000, else 1, after an
untimed one) and keeps their median; the medians over the rounds are printed as rows/s with the ratio collage / contender. Every contender runs with
2 threads. Accuracy is checked on the way: collage's predictions against the source library's
(max absolute difference), on the benchmark models and on the three synthetic datasets of
tests/trees/make_tree_models.py (dense, with NaN, with ties and zeros).

Contenders missing from the Python environment (treelite/tl2cgen, onnxmltools) are reported as
such and skipped. Timings never fail the run.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "trees"))

import lightgbm as lgb  # noqa: E402
import xgboost as xgb  # noqa: E402

THREADS = 2
FEATURES = 28
TREES, DEPTH = 500, 8
CLASSES = 10


def make_data(rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
    w = rng.normal(size=FEATURES)
    score = np.tanh(x @ w / np.sqrt(FEATURES)) + 0.3 * np.sin(3 * x[:, 0]) + 0.2 * x[:, 1] * x[:, 2]
    return x, score


def labels(task, score, rng):
    if task == "reg":
        return score + 0.05 * rng.normal(size=score.shape)
    if task == "bin":
        return (score + 0.2 * rng.normal(size=score.shape) > 0).astype(np.int64)
    cuts = np.quantile(score, np.linspace(0, 1, CLASSES + 1)[1:-1])
    return np.searchsorted(cuts, score + 0.1 * rng.normal(size=score.shape))


def train(workdir, task):
    """The XGBoost and LightGBM models of one task (trained once, then loaded)."""
    xgb_path = os.path.join(workdir, f"{task}_xgb.json")
    lgb_path = os.path.join(workdir, f"{task}_lgb.txt")
    rounds = TREES // CLASSES if task == "multi" else TREES
    if not (os.path.exists(xgb_path) and os.path.exists(lgb_path)):
        x, score = make_data(20000, 1)
        y = labels(task, score, np.random.default_rng(2))
        objective = {"reg": "reg:squarederror", "bin": "binary:logistic",
                     "multi": "multi:softprob"}[task]
        params = {"max_depth": DEPTH, "eta": 0.1, "objective": objective, "nthread": THREADS,
                  "tree_method": "hist", "seed": 0}
        if task == "multi":
            params["num_class"] = CLASSES
        xgb.train(params, xgb.DMatrix(x, label=y), rounds).save_model(xgb_path)
        lparams = {"objective": {"reg": "regression", "bin": "binary", "multi": "multiclass"}[task],
                   "max_depth": DEPTH, "num_leaves": 2 ** DEPTH - 1, "learning_rate": 0.1,
                   "num_threads": THREADS, "verbose": -1, "seed": 0, "min_data_in_leaf": 5}
        if task == "multi":
            lparams["num_class"] = CLASSES
        lgb.train(lparams, lgb.Dataset(x, label=y), rounds).save_model(lgb_path)
    booster = xgb.Booster(model_file=xgb_path)
    booster.set_param({"nthread": THREADS})
    return xgb_path, booster, lgb_path, lgb.Booster(model_file=lgb_path)


TARGET = None  # --target: the CPU the artifacts are compiled for (None: this machine)


def compile_collage(collage, model, batch, workdir, tag, features=FEATURES, show=False):
    """Compiles `model` (a file, or ONNX bytes) at `batch` for TARGET; with `show`, prints the
    tree strategy measured for each tree-ensemble node."""
    path = os.path.join(workdir, f"{tag}_b{batch}{'_' + TARGET if TARGET else ''}.collage")
    # Greedy placement on the trees and Eigen backends: the TreeEnsemble goes to the trees
    # backend, the sigmoid/softmax to Eigen. (The measured strategies would also time the
    # reference kernel at every batch; dnnl's Sigmoid on [batch, 1] measured 6 ms at batch
    # 1,000, against 0.1 ms for Eigen's, so greedy over all backends would time dnnl.)
    _, report = collage.compile_model(model, path, strategy="greedy", backends=["trees", "eigen"],
                                      input_shapes={"input": [batch, features]},
                                      num_threads=THREADS, target=TARGET)
    for t in report.get("tree_strategies", []) if show else []:
        timings = ", ".join(f"{c['strategy']} {c['ms']:.3f}" if c["ms"] >= 0
                            else f"{c['strategy']} skipped" for c in t["candidates"])
        print(f"  {tag} batch {batch}: node '{t['node']}' measured {t['chosen']} ({timings} ms)")
    return collage.Module(path, num_threads=THREADS)


def onnx_session(booster, task):
    """ONNX Runtime on the onnxmltools export of the XGBoost model and the export's bytes, or
    (None, None)."""
    try:
        import onnxmltools
        import onnxruntime as ort
        from onnxmltools.convert.common.data_types import FloatTensorType
    except ImportError as e:
        print(f"  onnx runtime: skipped ({e})")
        return None, None
    model = onnxmltools.convert_xgboost(booster, initial_types=[("input", FloatTensorType([None, FEATURES]))],
                                       target_opset=15)
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out = "variable" if task == "reg" else sess.get_outputs()[1].name
    return lambda x: sess.run([out], {"input": x})[0], model.SerializeToString()


def treelite_predictor(booster, workdir, tag):
    """tl2cgen's compiled predictor of the XGBoost model (treelite frontend), or None."""
    try:
        import tl2cgen
        import treelite
    except ImportError as e:
        print(f"  treelite/tl2cgen: skipped ({e})")
        return None
    lib = os.path.join(workdir, f"{tag}_tl2cgen.so")
    if not os.path.exists(lib):
        model = treelite.frontend.from_xgboost(booster)
        tl2cgen.export_lib(model, toolchain="gcc", libpath=lib, params={"parallel_comp": 16},
                           nthread=THREADS)
    pred = tl2cgen.Predictor(lib, nthread=THREADS)
    return lambda x: pred.predict(tl2cgen.DMatrix(x))


def timed_series(fn, x, calls):
    """Median seconds of `calls` back-to-back calls, after one untimed call. Each contender gets
    its own series, as in a server calling one predictor: a single call right after another
    library's would pay for that library's OpenMP or ORT threads still spinning on the cores
    (measured: collage at batch 10,000 took 19.9 ms right after LightGBM, 10.8 ms alone), so the
    series starts after a 0.3 s pause, in which OpenMP's and ONNX Runtime's spinning threads go
    to sleep (without it the ONNX-ML export compiled by collage, timed right after ONNX Runtime,
    took 12.0 ms at batch 10,000 against 7.2 ms from the command line)."""
    time.sleep(0.3)
    fn(x)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_case(contenders, x, rounds):
    """Median seconds per call of each contender: a series of calls per contender, the
    contenders alternating round after round, the median over the rounds."""
    calls = 5 if x.shape[0] <= 10_000 else 1
    times = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            times[name].append(timed_series(fn, x, calls))
    return {name: statistics.median(t) for name, t in times.items()}


def check(name, got, want, tol=1e-5):
    err = float(np.max(np.abs(got.reshape(want.shape) - want))) if want.size else 0.0
    print(f"  accuracy {name}: max |collage - library| = {err:.2e} "
          f"({'ok' if err <= tol else 'ABOVE 1e-5'})")
    return err


def accuracy_datasets(collage, workdir):
    """The synthetic datasets of tests/trees/make_tree_models.py, XGBoost and LightGBM models.
    LightGBM's trees are capped at depth 10: artifacts need the fused strategy (depth <= 16)."""
    import make_tree_models as mtm
    for kind in ("dense", "nan", "ties"):
        x, score = mtm.make_dataset(kind, 2000, 7)
        for task in mtm.TASKS:
            y = mtm.labels(task, score, np.random.default_rng(3))
            objective = {"reg": "reg:squarederror", "bin": "binary:logistic",
                         "multi": "multi:softprob"}[task]
            params = {"max_depth": 6, "eta": 0.3, "objective": objective, "nthread": THREADS}
            if task == "multi":
                params["num_class"] = mtm.CLASSES
            b = xgb.train(params, xgb.DMatrix(x, label=y, missing=np.nan), 20)
            path = os.path.join(workdir, f"acc_{kind}_{task}.json")
            b.save_model(path)
            m = compile_collage(collage, path, len(x), workdir, f"acc_{kind}_{task}", x.shape[1])
            want = b.predict(xgb.DMatrix(x, missing=np.nan)).astype(np.float32)
            check(f"xgboost {kind}/{task}", m.run(x)[0], want)
            lparams = {"objective": {"reg": "regression", "bin": "binary",
                                     "multi": "multiclass"}[task], "verbose": -1, "seed": 0,
                       "num_threads": THREADS, "max_depth": 10}
            if task == "multi":
                lparams["num_class"] = mtm.CLASSES
            lb = lgb.train(lparams, lgb.Dataset(x, label=y), 20)
            lpath = os.path.join(workdir, f"acc_{kind}_{task}.txt")
            lb.save_model(lpath)
            lm = compile_collage(collage, lpath, len(x), workdir, f"acc_{kind}_{task}_lgb",
                                 x.shape[1])
            check(f"lightgbm {kind}/{task}", lm.run(x)[0], lb.predict(x).astype(np.float32))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--workdir", default=os.path.expanduser("~/.cache/collage/trees-bench"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batches", default="1,10000,100000")
    ap.add_argument("--tasks", default="reg,bin,multi", help="timed tasks ('' for none)")
    ap.add_argument("--no-accuracy", action="store_true", help="skip the synthetic datasets")
    ap.add_argument("--target", default=None,
                    help="compile collage's artifacts for this CPU (avx2: they run the AVX2 "
                         "loops, even on an AVX-512 machine); the other libraries are unchanged")
    ap.add_argument("--nan-fraction", type=float, default=0.0,
                    help="this fraction of the timed inputs' features is NaN (missing values "
                         "take each tree's default branch)")
    args = ap.parse_args()
    global TARGET
    TARGET = args.target
    os.environ.setdefault("COLLAGE_LIB_DIR", os.path.join(args.build, "lib"))
    import collage
    os.makedirs(args.workdir, exist_ok=True)
    batches = [int(b) for b in args.batches.split(",")]
    x_all, _ = make_data(max(batches), 99)
    if args.nan_fraction > 0:
        x_all[np.random.default_rng(98).random(x_all.shape) < args.nan_fraction] = np.nan
    print(f"{TREES} trees of depth {DEPTH}, {FEATURES} features, {THREADS} threads; medians of "
          f"{args.rounds} alternating rounds; xgboost {xgb.__version__}, lightgbm {lgb.__version__}"
          f"; collage target {TARGET or 'host'}; NaN fraction {args.nan_fraction}")
    for task in filter(None, args.tasks.split(",")):
        xgb_path, booster, lgb_path, lbooster = train(args.workdir, task)
        print(f"\n[{task}] xgboost {xgb_path}, lightgbm {lgb_path}")
        ort_fn, onnx_model = onnx_session(booster, task)
        tl_fn = treelite_predictor(booster, args.workdir, f"{task}_xgb")
        for batch in batches:
            x = np.ascontiguousarray(x_all[:batch])
            cx = compile_collage(collage, xgb_path, batch, args.workdir, f"{task}_xgb")
            cl = compile_collage(collage, lgb_path, batch, args.workdir, f"{task}_lgb")
            want = booster.inplace_predict(x).astype(np.float32)
            check(f"xgboost model, batch {batch}", cx.run(x)[0], want)
            check(f"lightgbm model, batch {batch}", cl.run(x)[0],
                  lbooster.predict(x, num_threads=THREADS).astype(np.float32))
            contenders = {
                "collage(xgb model)": lambda v, m=cx: m.run(v),
                "xgboost inplace_predict": lambda v: booster.inplace_predict(v),
                "xgboost DMatrix predict": lambda v: booster.predict(xgb.DMatrix(v, nthread=THREADS)),
            }
            if tl_fn:
                contenders["tl2cgen (treelite)"] = tl_fn
            if ort_fn:
                contenders["onnxruntime (onnxmltools)"] = ort_fn
                # The same export compiled by collage: the tree node's strategy is measured.
                co = compile_collage(collage, onnx_model, batch, args.workdir, f"{task}_onnx",
                                     show=True)
                score = 0 if task == "reg" else 1  # the classifier's outputs: label, scores
                check(f"onnx-ml export, batch {batch}", co.run(x)[score], ort_fn(x))
                contenders["collage(onnx-ml export)"] = lambda v, m=co: m.run(v)
            contenders["collage(lgb model)"] = lambda v, m=cl: m.run(v)
            contenders["lightgbm predict"] = lambda v: lbooster.predict(v, num_threads=THREADS)
            med = bench_case(contenders, x, args.rounds)
            print(f"  batch {batch}:")
            for name, s in med.items():
                # ONNX Runtime against collage on the same export; the others against collage
                # on their library's model file.
                own = ("collage(onnx-ml export)" if name.startswith("onnxruntime")
                       else "collage(lgb model)" if "lgb" in name or "lightgbm" in name
                       else "collage(xgb model)")
                base = med[own]
                ratio = "" if name.startswith("collage") else f"  collage {s / base:6.2f}x"
                print(f"    {name:28s} {batch / s:14,.0f} rows/s  {s * 1e3:10.3f} ms{ratio}")
    if not args.no_accuracy:
        print("\n[accuracy] synthetic datasets (dense, nan, ties), 20 rounds")
        accuracy_datasets(collage, args.workdir)


if __name__ == "__main__":
    main()
