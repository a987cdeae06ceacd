"""The reprs of Conv1d, Conv2d, ConvTranspose1d and ConvTranspose2d are PyTorch's, for many
combinations of their options (recorded by fixtures/make_conv_repr_fixtures.py): only the
options away from their defaults are shown."""

import json
import pathlib

import pytest

from chainrule import nn

RECORDS = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "conv_reprs_torch.json").read_text()
)


def _given(value):
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"{r['layer']}-{r['kwargs']}")
def test_conv_repr_is_pytorchs(record):
    args = [_given(a) for a in record["args"]]
    kwargs = {k: _given(v) for k, v in record["kwargs"].items()}
    assert repr(getattr(nn, record["layer"])(*args, **kwargs)) == record["repr"]
