// Type-checked by the e2e test TestAISDKTypes (tsc --noEmit) against the
// mcpwasm package installed from its tarball and the pinned AI SDK:
// mcpwasm/ai's ToolSet goes where the AI SDK takes tools.
import { generateText, streamText, stepCountIs, ToolLoopAgent, DirectChatTransport, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { load, type Catalog } from "mcpwasm";
import { toolsFromCatalog, type AIApprovalRequest } from "mcpwasm/ai";

export async function usage(): Promise<string> {
  const mcp = await load();
  const cat: Catalog = mcp.catalog({ servers: { notes: { url: "https://mcp.example.com/mcp" } } });
  const approve = async (req: AIApprovalRequest): Promise<boolean | "always"> =>
    req.annotations?.readOnlyHint === true ? true : req.tool === "note_add" ? "always" : false;
  const tools: ToolSet = await toolsFromCatalog(cat, { approve, signal: AbortSignal.timeout(10_000) });
  const model = new MockLanguageModelV4();
  const { text } = await generateText({ model, tools, prompt: "hello", stopWhen: stepCountIs(3) });
  const stream = streamText({ model, tools: await toolsFromCatalog(cat), prompt: "hi", abortSignal: new AbortController().signal });
  const agent = new ToolLoopAgent({ model, tools });
  const transport = new DirectChatTransport({ agent });
  void transport;
  return text + (await stream.text);
}
