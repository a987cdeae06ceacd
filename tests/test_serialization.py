"""chainrule.save / chainrule.load: tensors, module and optimizer state dicts round-trip, and
loading runs no code: a crafted malicious pickle (as a file, and inside an archive) is
refused without running, unless weights_only=False says the file is trusted."""

import io
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from conftest import N, T


def test_a_tensor_round_trips_with_dtype_and_requires_grad(tmp_path):
    x = T(np.arange(6.0).reshape(2, 3), np.float32, requires_grad=True)
    path = tmp_path / "x.pt"
    cr.save(x, path)
    y = cr.load(path)
    assert isinstance(y, cr.Tensor) and y.is_leaf and y.requires_grad
    assert y.dtype == cr.float32 and N(y.detach()).tolist() == N(x.detach()).tolist()
    assert type(y._data) is type(x._data)


def test_state_dicts_round_trip_and_restore_a_model_and_its_optimizer():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    opt = optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9))
    cr.sum(model(T(np.ones((5, 3))))).backward()
    opt.step()
    f = io.BytesIO()
    cr.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, f)
    f.seek(0)
    loaded = cr.load(f)
    assert loaded["epoch"] == 3 and isinstance(loaded["model"], OrderedDict)
    assert list(loaded["model"]) == list(model.state_dict())
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(np.asarray(loaded["model"][key]), np.asarray(value))
    state = opt.state_dict()
    assert loaded["opt"]["param_groups"][0]["betas"] == (0.8, 0.9)
    assert set(loaded["opt"]["state"]) == set(state["state"])  # integer keys kept
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    fresh.load_state_dict(loaded["model"])
    optim.Adam(fresh.parameters()).load_state_dict(loaded["opt"])


def test_python_values_nest_and_keep_their_types():
    value = {
        "t": (1, 2.5, float("inf"), 1 + 2j, None, True, "s"),
        "nested": [[{"deep": cr.float32}]],
        7: np.float64(0.5),
    }
    f = io.BytesIO()
    cr.save(value, f)
    f.seek(0)
    assert cr.load(f) == value


class _Payload:
    """Unpickling this runs `os.system`-like code: it writes a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_malicious_pickle_file_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"weights": _Payload(str(marker))}))
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        cr.load(path)
    assert not marker.exists()
    cr.load(path, weights_only=False)  # the explicit opt-in runs it
    assert marker.exists()


def test_a_pickled_archive_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    with pytest.raises(TypeError, match="allow_pickle=True"):
        cr.save({"payload": _Payload(str(marker))}, path)
    cr.save({"payload": _Payload(str(marker))}, path, allow_pickle=True)
    with pytest.raises(pickle.UnpicklingError, match="runs whatever code"):
        cr.load(path)
    assert not marker.exists()
    cr.load(path, weights_only=False)
    assert marker.exists()


HEADER = '{"format": "chainrule-save-1", "root": ["array", "a0", "%s"]}'


def test_an_archive_with_an_object_array_or_an_unknown_library_is_refused(tmp_path):
    path = tmp_path / "objects.npz"
    with open(path, "wb") as f:
        np.savez(
            f,
            __chainrule__=np.asarray(
                '{"format": "chainrule-save-1", "root": ["array", "a0", "numpy"]}'
            ),
            a0=np.array([object()]),
        )
    with pytest.raises(ValueError, match="allow_pickle"):
        cr.load(path)
    with open(path, "wb") as f:
        np.savez(
            f,
            __chainrule__=np.asarray(
                '{"format": "chainrule-save-1", "root": ["array", "a0", "os"]}'
            ),
            a0=np.zeros(2),
        )
    with pytest.raises(ValueError, match="unknown array library 'os'"):
        cr.load(path)
