"""One turn of an agent on a durable-memory session, in a process of its own (a restart between
turns): `python agent_turn.py THREAD_ID INPUT` prints the agent's answer. Reads the same environment
as the tests (conftest.py)."""

from __future__ import annotations

import asyncio
import os
import sys

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from durable_memory import AsyncClient
from durable_memory.agents import DurableMemorySession


@function_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: sunny, 18°C"


def weather_agent() -> Agent:
    """An agent with one tool, its model the local test server's Responses API."""
    model = OpenAIResponsesModel(
        model="gpt-4o-mini",
        openai_client=AsyncOpenAI(base_url=os.environ["DM_TEST_LLM_URL"], api_key="test"),
    )
    return Agent(name="weather", instructions="Answer briefly.", model=model, tools=[get_weather])


async def main(thread_id: str, text: str) -> None:
    set_tracing_disabled(True)  # no trace export to OpenAI from a test
    async with AsyncClient(os.environ["DURABLE_MEMORY_API_URL"], os.environ["DM_TEST_TOKEN_A"]) as client:
        session = DurableMemorySession(client, thread_id, user_id="alice")
        result = await Runner.run(weather_agent(), text, session=session)
        print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
