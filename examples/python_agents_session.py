"""An OpenAI Agents SDK (Python) agent whose session is a durable-memory thread, over the HTTP API.

It needs a chat model (OPENAI_API_KEY, or OPENAI_BASE_URL of an endpoint with the Responses API).
Start the stack (`npm start`), install the package (`pip install './python[agents]'`), then, in the
same directory:

    OPENAI_API_KEY=... python examples/python_agents_session.py

The client finds the API in the stack's endpoints.json (or DURABLE_MEMORY_API_URL); with tokens, set
DURABLE_MEMORY_API_TOKEN.

Each turn opens a new client and session, as a new process would: the thread remembers, not the
process. Without a token the local API serves loopback requests as the `local` tenant.
"""

import asyncio
import os
import sys

if not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
    sys.exit(
        "python_agents_session needs a chat model: set OPENAI_BASE_URL to an endpoint with the Responses "
        "API, or OPENAI_API_KEY to use OpenAI itself."
    )

from agents import Agent, function_tool

from durable_memory import AsyncClient
from durable_memory.agents import DurableMemorySession

THREAD = os.environ.get("THREAD_ID", "python-agents-demo")


@function_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: sunny, 18°C"


agent = Agent(name="Assistant", instructions="Answer briefly.", model="gpt-4o-mini", tools=[get_weather])


async def turn(text: str) -> None:
    # URL from DURABLE_MEMORY_API_URL, else the stack's endpoints.json; token from DURABLE_MEMORY_API_TOKEN.
    async with AsyncClient() as memory:
        session = DurableMemorySession(memory, THREAD, user_id="alice")
        # session.run is Runner.run(agent, text, session=session) with recall asking about `text`.
        result = await session.run(agent, text)
        print(f"user: {text}\nassistant: {result.final_output}")


async def main() -> None:
    await turn("What is the weather in Paris?")
    await turn("Do I need an umbrella?")
    async with AsyncClient() as memory:
        items = await DurableMemorySession(memory, THREAD).get_items()
        print("session items:", [item.get("type", "message") for item in items])


asyncio.run(main())
