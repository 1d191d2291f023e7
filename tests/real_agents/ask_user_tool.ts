/** A test-only pi extension: a tool `ask_user` that opens pi's confirm dialog, so a test can
 * see a real pi wait for the user (and the Herdr extension report it as blocked). */
export default function (pi: any): void {
  pi.registerTool({
    name: "ask_user",
    label: "Ask the user",
    description: "Ask the user a yes/no question and return the answer",
    parameters: {
      type: "object",
      properties: { question: { type: "string" } },
      required: ["question"],
    },
    async execute(_id: string, params: any, _signal: unknown, _onUpdate: unknown, ctx: any) {
      const yes = await ctx.ui.confirm("Question", params.question);
      return { content: [{ type: "text", text: yes ? "user said yes" : "user said no" }], details: {} };
    },
  });
}
