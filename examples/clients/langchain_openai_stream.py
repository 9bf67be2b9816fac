"""LangChain, `ChatOpenAI` streaming: the chunks added up (`full = full + chunk`, as LangChain's
streaming docs show), then the aggregated message's `tool_calls` (LangChain's parsed calls;
`invalid_tool_calls`, the ones it could not parse, are left out)."""

from langchain_openai import ChatOpenAI

from tools import MODEL, PROMPT, chat_tools, emit, openai_base_url

llm = ChatOpenAI(model=MODEL, base_url=openai_base_url(), api_key="sk-dummy", max_retries=0, streaming=True)
llm = llm.bind_tools(chat_tools())

full = None
for chunk in llm.stream(PROMPT):
    full = chunk if full is None else full + chunk

emit([{"name": tc["name"], "arguments": tc["args"], "id": tc.get("id")} for tc in (full.tool_calls if full else [])])
