"""The inputs of an AMS workload, validated and broadcast once: the vocabularies, the
measured configuration's counts and :class:`Scenario`.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from dataclasses import dataclass, field

import numpy as np

from ..._validate import as_choice_array, broadcast, index_text
from ...domains import MESSAGE_KB, OTHER_LPAR_UTIL, RECIPIENTS
from ...figures import figure
from ...params import (KEY_TYPES, normalize_choice, normalize_key, normalize_key_reuse, normalize_key_type,
    normalize_policy, POLICIES)
from ..crypto import CARD_FUNCTIONS

__all__ = ["AMS_ADDRESS_SPACES", "AMS_PLATFORMS", "SIZE_CLASSES_KB", "CARD_MODES", "RESOURCES",
           "CARD_RMF_FUNCTIONS", "CARD_GENERATIONS", "FUNCTIONS", "ON_CARD", "RMF_EXAMPLE",
           "choice_codes", "Scenario", "validated_scenario", "resource_count", "other_utilization"]

AMS_ADDRESS_SPACES = ("total", "application", "AMSM", "MSTR")
AMS_PLATFORMS = ("z13", "z14", "z15", "z16")
# The z15 report's "small", "medium" and "large" AMS messages, which it does not give in KB:
# read as the sizes MQ's AMS measurements use (the z14 report's 2KB and 4MB, seed 001's
# 2KB, 64KB and 4MB).  An assumption, not a published figure: see ams_platform_factors.
SIZE_CLASSES_KB = {"small": 2.0, "medium": 64.0, "large": 4096.0}
CARD_MODES = ("accelerator", "coprocessor")
RESOURCES = ("processors", "coprocessors", "accelerators")
CARD_RMF_FUNCTIONS = ("summary", "ME", "CRT")
# Crypto Express generations: the card times are fitted to CEX8S (seed 001's z16)
CARD_GENERATIONS = ("CEX6S", "CEX7S", "CEX8S")
FUNCTIONS = tuple(CARD_FUNCTIONS)   # CCA_RSA, RSA_ME, RSA_CRT, CCA_ECC
ON_CARD = {c: np.array([CARD_FUNCTIONS[f].card == c for f in FUNCTIONS]) for c in CARD_MODES}

# The measured configuration's card and processor counts (model.planning.defaults reads the same rows).
_MEASURED = {"coprocessors": "s001_cfg_coprocessors_per_lpar",
             "accelerators": "s001_cfg_accelerators_shared",
             "processors": "ref_start_cfg_cps"}


# Seed 001's RMF example as one configuration: Privacy with RSA-2048 certificates, one
# recipient, seed 001's 2 coprocessors and 1 accelerator, at the transaction rate that sends
# the report's ME requests (8 per transaction): tx_rate = ME rate / 8.
RMF_EXAMPLE = {"policy": "privacy", "key_type": "RSA", "key_size": 2048, "message_kb": 2.0,
               "recipients": 1, "coprocessors": 2, "accelerators": 1}



def choice_codes(name, value, normalize, vocabulary):
    """Category codes (index into ``vocabulary``) of a scalar or array argument.

    Each distinct spelling is normalized once (np.unique), so an array of
    100,000 scenarios costs one normalization per distinct value.
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(vocabulary.index(normalize(value)))
    arr, keys = as_choice_array(name, value)
    if arr.ndim == 0:
        return np.asarray(vocabulary.index(normalize(arr.item())))
    uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    flat = arr.ravel()
    codes = np.array([vocabulary.index(normalize(flat[i])) for i in first], dtype=np.int64)
    return codes[inv].reshape(arr.shape)


def _reuse(value):
    """Key reuse as floats (inf = unlimited), with the spelling rules of normalize_key_reuse."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(normalize_key_reuse(value))
    arr, keys = as_choice_array("key_reuse", value)
    if arr.ndim == 0:
        return np.asarray(normalize_key_reuse(arr.item()))
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    flat = arr.ravel()
    vals = np.array([normalize_key_reuse(flat[i]) for i in first], dtype=float)
    return vals[inv].reshape(arr.shape)


def _keys(key_type, key_size):
    """(is_ecc, bits) arrays after checking every (type, size) pair against the supported sizes."""
    kt = choice_codes("key_type", key_type, normalize_key_type, KEY_TYPES)
    if kt.ndim == 0 and not isinstance(key_size, (list, tuple, np.ndarray)):
        return np.asarray(bool(kt == 1)), np.asarray(float(normalize_key(KEY_TYPES[int(kt)], key_size)[1]))
    size, size_keys = as_choice_array("key_size", key_size)
    kt, size, size_keys = np.broadcast_arrays(kt, size, size_keys)
    # one code per distinct (type, size spelling) pair
    _, size_code = np.unique(size_keys, return_inverse=True)
    pairs = kt.astype(np.int64) * (int(size_code.max(initial=0)) + 1) + size_code.reshape(kt.shape)
    _, first, inv = np.unique(pairs, return_index=True, return_inverse=True)
    flat_t, flat_s = kt.ravel(), size.ravel()
    bits = np.array([normalize_key(KEY_TYPES[int(flat_t[i])], flat_s[i])[1] for i in first],
                    dtype=float)
    return kt == 1, bits[inv].reshape(kt.shape)


def _measured(value, key):
    """``value``, or the measured configuration's count when it is None."""
    if value is None:
        return figure(_MEASURED[key]).target()
    return value


@dataclass(frozen=True)
class Scenario:
    """Validated, broadcast inputs of one or many AMS scenarios (arrays of one shape)."""

    policy: np.ndarray      # int codes into POLICIES
    ecc: np.ndarray         # bool
    bits: np.ndarray
    kb: np.ndarray
    reuse: np.ndarray       # inf = unlimited
    recipients: np.ndarray
    platform: np.ndarray    # int codes into AMS_PLATFORMS
    generation: np.ndarray  # int codes into CARD_GENERATIONS
    cache: dict = field(default_factory=dict, compare=False, repr=False)   # figures-only arrays


def validated_scenario(policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
                       card_generation="CEX8S") -> Scenario:
    """The :class:`Scenario` of the arguments: each checked against its domain, all broadcast.

    Raises ValueError naming the argument, the value (and its index in an array) and what is
    allowed; key reuse with a policy other than confidentiality, and NISTECC keys with one other
    than integrity, are refused.
    """
    pol = choice_codes("policy", policy, normalize_policy, POLICIES)
    ecc, bits = _keys(key_type, key_size)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    k = _reuse(key_reuse)
    r = np.asarray(RECIPIENTS.check(recipients), dtype=float)
    plat = choice_codes("platform", platform, lambda v: normalize_choice("platform", v, AMS_PLATFORMS),
                        AMS_PLATFORMS)
    gen = choice_codes("card_generation", card_generation,
                       lambda v: normalize_choice("card_generation", v, CARD_GENERATIONS), CARD_GENERATIONS)
    pol, ecc, bits, kb, k, r, plat, gen = broadcast(
        policy=pol, key_type=ecc, key_size=bits, message_kb=kb, key_reuse=k, recipients=r, platform=plat,
        card_generation=gen)
    conf = pol == POLICIES.index("confidentiality")
    bad = ~conf & (k != 1.0)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise InputError(f"key_reuse applies to the confidentiality policy only (got "
                         f"{'unlimited' if np.isinf(k[i]) else f'{k[i]:g}'} with {POLICIES[int(pol[i])]}"
                         f"{f' at index {index_text(i)}' if bad.ndim else ''}); leave it empty")
    bad = ecc & (pol != POLICIES.index("integrity"))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise InputError(f"NISTECC keys support the integrity policy only (got "
                         f"{POLICIES[int(pol[i])]}{f' at index {index_text(i)}' if bad.ndim else ''}): NISTECC "
                         "certificates have no DATAENCRYPT key usage")
    return Scenario(pol, ecc, bits, kb, k, r, plat, gen)


def resource_count(domain, name, value, key):
    """A processor or card count checked against ``domain``; None reads the measured configuration's
    count (figure row of ``key``), and 1 when there is no such row."""
    if value is None and key is None:
        value = 1.0
    return np.asarray(domain.check(_measured(value, key), name), dtype=float)


def other_utilization(name, value):
    """The other LPARs' utilization of a card pool (fraction, [0, 1)), checked."""
    return np.asarray(OTHER_LPAR_UTIL.check(value, name), dtype=float)
