# Every target sets up what it needs: a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench
DEMO_STAMP := $(VENV)/.installed-demo
DOCS_STAMP := $(VENV)/.installed-docs
BACKENDS_STAMP := $(VENV)/.installed-backends
GPU_STAMP := $(VENV)/.installed-gpu
# The smoke run on other backends: the test files that gradcheck rules (they name them in
# GRADCHECKED), the rule table's (the library's own derivative kernels), the data types',
# the searching and sorting functions' (integer results of the library's kernels) and
# chainrule.compile's (a replay calls the same rules on that library's arrays), each
# Hypothesis test on at most 3 drawn examples.
SMOKE = $(shell grep -l '^GRADCHECKED' tests/test_*.py) tests/test_rule_table.py \
  tests/test_dtypes.py tests/test_searching_and_sorting.py tests/test_compile.py
# The quick run on Dask and JAX (slow per operation: JAX compiles each new shape, Dask builds
# and computes a task graph per finite difference): the tests that gradcheck the elementwise,
# reduction, shape, indexing, matmul, cumulative, activation and item-assignment rules, each
# Hypothesis test on one drawn example (profile "quick"). Linear algebra and conv2d are left
# to make test-backends (see the README).
QUICK_SMOKE := $(addprefix tests/test_elementwise.py::test_, unary_values_and_derivatives \
    binary_values_and_derivatives_with_broadcasting where_values_and_derivatives_with_broadcasting \
    reciprocal_values_and_derivatives) \
  $(addprefix tests/test_reductions.py::test_, reduction_values_and_derivatives_over_drawn_axes \
    softmax_values_and_derivatives_over_a_drawn_axis cumulative_values_and_derivatives) \
  $(addprefix tests/test_manipulation.py::test_, reshape permute_dims broadcast_to \
    flip_over_drawn_axes concat_along_a_drawn_axis stack_along_a_drawn_axis \
    take_with_repeated_indices_along_a_drawn_axis take_add_values_and_derivatives \
    astype_between_float64_and_float32 basic_indexing_with_slices_integers_ellipsis_and_newaxis \
    integer_array_indexing_with_repeated_indices index_add_values_and_derivatives \
    repeat_by_a_count roll tile unstack take_along_axis_with_broadcasting_and_negative_indices \
    take_along_add_values_and_derivatives) \
  $(addprefix tests/test_linalg.py::test_, matmul_values_and_derivatives \
    diagonal_and_trace_values_and_derivatives outer_values_and_derivatives) \
  tests/test_inplace.py::test_setitem_gradients_first_and_second_order \
  tests/test_nn_functional.py::test_activation_first_and_second_derivatives
# Backends beyond NumPy and array_api_strict that install on the development machines; make
# test runs the smoke run on PyTorch and the quick run on Dask and JAX.
OTHER_BACKENDS := dask jax torch
SMOKE_BACKENDS := torch
QUICK_BACKENDS := dask jax

.PHONY: demo test test-quick test-backends test-gpu lint docs dist bench bench-quick conformance clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[test,dev,docs]'
	touch $(STAMP)

# The unit tests of the core on NumPy storage, each Hypothesis test on 3 drawn examples: a
# change's own loop (under two minutes; 25 s of CPU time on the 2-core development machine).
# Left out: the million-operation chain and the check that every rule has a gradient test
# (which imports every test module): make test runs everything.
QUICK_TESTS := $(addprefix tests/test_, tensor engine elementwise manipulation reductions dtypes \
  creation searching_and_sorting inplace graph_api custom_function autograd_functional \
  forward_ad func_transforms nn_module nn_layers nn_functional optim random tree checkpoint)
QUICK_TESTS := $(addsuffix .py, $(QUICK_TESTS))

$(DEMO_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

# Trains on scikit-learn's bundled digits; pictures go to demo-output/. Then the three
# PyTorch ports of examples/ports, at their small size (seconds each).
demo: $(DEMO_STAMP)
	$(PY) examples/demo.py demo-output
	$(PY) examples/ports/digits_cnn.py --size small
	$(PY) examples/ports/transformer.py --size small
	$(PY) examples/ports/oscillator_lbfgs.py --size small

# SCIPY_ARRAY_API=1: SciPy's Array API support, read when SciPy is first imported (the
# third-party tests need it; tests/conftest.py sets it too, for pytest run by hand).
# The suite runs in random order (pytest-randomly), its seed printed first: a failure that
# depends on the order reruns with `-p randomly --randomly-seed=SEED`.
# The array-api-strict run checks that every call keeps to the standard's namespace; its
# arrays hold NumPy's and run NumPy's kernels, so each Hypothesis test draws the quick
# profile's one example there (25 on NumPy): the stage took six minutes on 25, and five to
# six on 3, which kept `make test` over ten minutes on two cores.
SEED := $(shell $(PYTHON) -c "import random; print(random.randrange(2**31))")
test: $(STAMP) $(BACKENDS_STAMP)
	@echo "random order: --randomly-seed=$(SEED)"
	SCIPY_ARRAY_API=1 $(PY) -m pytest -q -n 2 -p randomly --randomly-seed=$(SEED) tests
	SCIPY_ARRAY_API=1 CHAINRULE_BACKEND=array_api_strict $(PY) -m pytest -q -n 2 -p randomly \
	  --hypothesis-profile=quick --randomly-seed=$(SEED) tests
	for b in $(SMOKE_BACKENDS); do \
	  echo "smoke run on $$b"; \
	  SCIPY_ARRAY_API=1 CHAINRULE_BACKEND=$$b $(PY) -m pytest -q -n 2 --hypothesis-profile=smoke \
	    -p randomly --randomly-seed=$(SEED) $(SMOKE) || exit 1; \
	done
	for b in $(QUICK_BACKENDS); do \
	  echo "quick run on $$b"; \
	  SCIPY_ARRAY_API=1 CHAINRULE_BACKEND=$$b $(PY) -m pytest -q -n 2 --hypothesis-profile=quick \
	    -p randomly --randomly-seed=$(SEED) $(QUICK_SMOKE) || exit 1; \
	done

test-quick: $(STAMP)
	SCIPY_ARRAY_API=1 $(PY) -m pytest -q -n 2 --hypothesis-profile=smoke $(QUICK_TESTS) \
	  --deselect tests/test_engine.py::test_chain_of_a_million_ops_differentiates_and_is_freed

$(BACKENDS_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[test,dev,docs,backends]'
	touch $(BACKENDS_STAMP)

$(GPU_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[test,dev,gpu]'
	touch $(GPU_STAMP)

# The whole suite on each other backend (long: see the README), then the Dask cluster example.
# On Dask each Hypothesis test draws one example: every finite difference computes a task graph.
test-backends: $(BACKENDS_STAMP)
	for b in $(OTHER_BACKENDS); do \
	  echo "whole suite on $$b"; \
	  profile=default; [ $$b = dask ] && profile=quick; \
	  SCIPY_ARRAY_API=1 CHAINRULE_BACKEND=$$b $(PY) -m pytest -q -n 2 --timeout 900 -rfE \
	    --hypothesis-profile=$$profile tests || exit 1; \
	done
	$(PY) examples/dask_logistic.py --check

# On a machine with an NVIDIA GPU (CUDA 12): the smoke run and W1/W2 on CuPy storage.
test-gpu: $(GPU_STAMP)
	SCIPY_ARRAY_API=1 CHAINRULE_BACKEND=cupy $(PY) -m pytest -q --hypothesis-profile=smoke $(SMOKE)
	$(PY) benchmarks/run.py --quick --systems chainrule chainrule-cupy --workloads W1 W2 \
	  --out benchmarks/results-gpu.json --md benchmarks/results-gpu.md

$(BENCH_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) benchmarks/run.py --out benchmarks/results.json --md benchmarks/results.md
	$(PY) benchmarks/jvp.py --md benchmarks/jvp-results.md
	$(PY) benchmarks/loop.py --out benchmarks/loop.json --md benchmarks/loop.md
	$(PY) benchmarks/checkpoint_memory.py > benchmarks/checkpoint_memory.md
	$(PY) benchmarks/vmap.py --md benchmarks/vmap-results.md

bench-quick: $(BENCH_STAMP)
	$(PY) benchmarks/run.py --quick --out benchmarks/results-quick.json --md benchmarks/results-quick.md
	$(PY) benchmarks/jvp.py --quick --md benchmarks/jvp-results-quick.md
	$(PY) benchmarks/loop.py --repeats 1 --out benchmarks/loop-quick.json --md benchmarks/loop-quick.md
	$(PY) benchmarks/vmap.py --quick --md benchmarks/vmap-results-quick.md

$(DOCS_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

# The user guide and API reference as HTML in site/ (warnings are errors).
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The sdist and the wheel into dist/ (tests/test_packaging.py installs such a wheel into a
# fresh virtual environment and runs the README's example there).
dist: $(STAMP)
	$(PY) -m build --outdir dist .

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks examples
	$(PY) -m ruff format --check src tests benchmarks examples

# The official Array API test suite (data-apis/array-api-tests), on NumPy and on chainrule.
# Needs a checkout of the suite: make conformance ARRAY_API_TESTS_DIR=/path/to/array-api-tests
conformance:
	ARRAY_API_TESTS_DIR="$(ARRAY_API_TESTS_DIR)" PYTHON="$(PYTHON)" bash scripts/conformance.sh

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist site demo-output src/*.egg-info
