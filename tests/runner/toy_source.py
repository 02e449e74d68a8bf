"""Source of a third-party benchmark package written by the extension tests into a temporary
folder (never imported from here): it uses only ideaharness's public protocol."""

TOY_MODULE = '''
from pydantic import BaseModel, Field

from ideaharness.report.html import Table
from ideaharness.runner import Benchmark, BenchmarkConfig, MetricSpec, MetricValue, register_metric

register_metric(MetricSpec("{name}.echo_rate", higher_is_better=True, aggregation="share of items",
                           ci="none", range=(0.0, 1.0), source="a test"))


class ToyConfig(BenchmarkConfig):
    generator: str = Field("openai/toy", description="The model that echoes.")
    items: int = Field(5, ge=1, description="Items in the toy data.")


class Item(BaseModel):
    id: str
    text: str


class Toy(Benchmark):
    title = "Toy results"
    summary = "A toy benchmark: the model repeats a word."
    config_class = ToyConfig

    def load(self):
        return [Item(id=f"toy-{{i}}", text=f"word{{i}}") for i in range(self.config.items)]

    async def execute(self, ctx, items):
        model = ctx.model("generator")

        async def echo(item):
            await ctx.steps.judge_step("echo", item.id, "", model, self.messages(item),
                                       lambda text: text.strip(), max_tokens=16)

        await ctx.steps.run_phases(items, [("echo", echo)])

    def messages(self, item):
        return [{{"role": "user", "content": item.text}}]

    def aggregate(self, ctx, items):
        records = [ctx.store.get("echo", i.id) for i in items]
        done = sum(1 for r in records if r and r["judgment"]["parse_ok"])
        return {{"echoed": done, "items": len(items)}}

    def tables(self, results):
        return [Table(title="Toy", columns=["echoed", "items"], rows=[[results["echoed"], results["items"]]])]

    def headline(self, results):
        return [MetricValue(metric="{name}.echo_rate", value=results["echoed"] / results["items"],
                            n=results["items"])]
'''
