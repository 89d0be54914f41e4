"""``dumps_js``'s fast path (one C ``json.dumps``) writes exactly what the JS-exact walker does."""

from __future__ import annotations

import random
from typing import Any

from swarmq.knowledge.serialize import _emit, dumps_js


def walker(value: Any) -> str:
    parts: list[str] = []
    _emit(value, parts)
    return "".join(parts)


SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    10**20,
    0.6,
    -0.43999999999999995,
    1.0,
    100.0,
    0.0,
    1e-7,
    1e-5,
    1e16,
    1e21,
    123456.789,
    float("nan"),
    float("inf"),
    "plain",
    'tëxt \u2028 "q" \\ \n \x01',
    "lone \ud800 surrogate",
    "汉字",
]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice([*SCALARS, rng.random() * 10 ** rng.randrange(-8, 22)])
    if roll < 0.75:
        return {
            (f"k{rng.randrange(9)}" if rng.random() < 0.9 else rng.randrange(5)): random_value(
                rng, depth + 1
            )
            for _ in range(rng.randrange(4))
        }
    items = [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return items if rng.random() < 0.5 else tuple(items)


def test_fast_path_matches_the_walker() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        value = random_value(rng)
        assert dumps_js(value) == walker(value), value


def test_scalars_keep_javascript_forms() -> None:
    assert dumps_js({"a": 1.0, "b": [1e-7, 1e21, 0.5], "c": "\ud800"}) == (
        '{"a":1,"b":[1e-7,1e+21,0.5],"c":"\\ud800"}'
    )
