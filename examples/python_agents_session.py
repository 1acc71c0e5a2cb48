"""An OpenAI Agents SDK (Python) agent whose session is a durable-memory thread, over the HTTP API.

Start the stack (`npm start` prints `api=...` on its ready line), install the package
(`pip install './python[agents]'`), then:

    DURABLE_MEMORY_API_URL=http://127.0.0.1:8080 DURABLE_MEMORY_API_TOKEN=... OPENAI_API_KEY=... \
        python examples/python_agents_session.py

Each turn opens a new client and session, as a new process would: the thread remembers, not the
process. Without a token the local API serves loopback requests as the `local` tenant.
"""

import asyncio
import os

from agents import Agent, Runner, function_tool

from durable_memory import AsyncClient
from durable_memory.agents import DurableMemorySession

THREAD = os.environ.get("THREAD_ID", "python-agents-demo")


@function_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: sunny, 18°C"


agent = Agent(name="Assistant", instructions="Answer briefly.", model="gpt-4o-mini", tools=[get_weather])


async def turn(text: str) -> None:
    # URL and token from DURABLE_MEMORY_API_URL and DURABLE_MEMORY_API_TOKEN.
    async with AsyncClient() as memory:
        session = DurableMemorySession(memory, THREAD, user_id="alice")
        result = await Runner.run(agent, text, session=session)
        print(f"user: {text}\nassistant: {result.final_output}")


async def main() -> None:
    await turn("What is the weather in Paris?")
    await turn("Do I need an umbrella?")
    async with AsyncClient() as memory:
        items = await DurableMemorySession(memory, THREAD).get_items()
        print("session items:", [item.get("type", "message") for item in items])


asyncio.run(main())
