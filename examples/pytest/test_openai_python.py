"""openai-python against every OpenAI Chat case of sse-replay's suite, in pytest.

    pip install ../../python pytest openai      # the plugin is found by its entry point
    SSE_REPLAY_BIN=../../target/debug/sse-replay pytest -q

Clean recordings pass; quirk-repeated-name fails with a named diagnosis ("behaves like
`concat-fields`": the helper's accumulate_delta appends the name a provider repeats).
"""

import pytest

from openai_python_client import tool_calls


@pytest.mark.sse_replay(dialect="openai-chat")
def test_openai_python_assembles_the_tool_calls(sse_replay_case):
    try:
        calls = tool_calls(sse_replay_case.openai_base_url, sse_replay_case.tools)
    except Exception as e:  # the SDK gave up: the right answer to a stream that breaks
        sse_replay_case.check(error=e)
        return
    sse_replay_case.check(calls)
