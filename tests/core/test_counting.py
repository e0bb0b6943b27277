"""forge's own token counts with litellm's counter switched off for litellm's up-front pricing
(llm/loading.py): each count of forge's counts, in any thread, and the switch is off after."""

from __future__ import annotations

import threading

from forge_jupyter import llm


def test_counts_in_several_threads_at_once_all_count_and_leave_the_counter_off():
    results: list[int] = []
    start = threading.Barrier(6)

    def count() -> None:
        start.wait()
        for _ in range(40):
            results.append(llm.count_tokens("openai/gpt-4o-mini", text="count these few words"))

    threads = [threading.Thread(target=count) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 240 and min(results) > 0  # none counted while another turned it off
    assert llm.litellm().disable_token_counter is True  # litellm's own pricing stays off
