"""`python -m forge_jupyter.testing [--demo] [--port N]`: serve until Ctrl-C."""

from __future__ import annotations

import argparse
import threading

from forge_jupyter.testing.server import FakeModelServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m forge_jupyter.testing", description=__doc__)
    parser.add_argument("--demo", action="store_true", help="answer every request by demo rules")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.02, help="demo: seconds between chunks"
    )
    args = parser.parse_args(argv)
    server = FakeModelServer(
        host=args.host, port=args.port, demo=args.demo, demo_chunk_delay=args.chunk_delay
    )
    with server:
        print(f"fake model server on {server.url}", flush=True)
        print(f"  openai:    model=openai/fake-model api_base={server.openai_base}", flush=True)
        print(
            f"  anthropic: model=anthropic/claude-sonnet-4-5 api_base={server.anthropic_base}",
            flush=True,
        )
        if not args.demo:
            print("  the script is empty: every request gets HTTP 500 (use --demo)", flush=True)
        print("Ctrl-C to stop.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
