// forge_jupyter's cell widget bootstrap, the only script a saved notebook keeps (see
// forge_jupyter/notebook/widget_code.py): the renderer is the labextension's when JupyterLab
// has it, else the kernel sends it ({type: "code"} → {kind: "code", esm, css}), once a page.
const KEY = Symbol.for("forge-jupyter.render"), CODE = Symbol.for("forge-jupyter.code");
const PROTOCOL = 1, g = globalThis;

function fromKernel(model) {
  return new Promise((resolve, reject) => {
    const on = (msg) => {
      if (!msg || msg.kind !== "code") return;
      clearTimeout(timer);
      model.off("msg:custom", on);
      msg.error ? reject(new Error(msg.error)) : resolve(msg);
    };
    const timer = setTimeout(() => {
      model.off("msg:custom", on);
      reject(new Error("its kernel did not answer (is it still running?)"));
    }, 30000);
    model.on("msg:custom", on);
    model.send({ type: "code" });
  }).then(async ({ esm, css }) => {
    if (!document.getElementById("forge-jupyter-css")) {
      document.head.append(Object.assign(document.createElement("style"),
        { id: "forge-jupyter-css", textContent: css }));
    }
    const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
    try {
      return (await import(url)).default;
    } finally {
      URL.revokeObjectURL(url);
    }
  });
}

export default {
  async render({ model, el }) {
    try {
      if (g[KEY]?.protocol !== PROTOCOL) {
        g[CODE] ||= fromKernel(model).catch((err) => { g[CODE] = null; throw err; });
      }
      return (g[KEY]?.protocol === PROTOCOL ? g[KEY] : await g[CODE]).render({ model, el });
    } catch (err) {
      el.textContent = `forge: the live view of this turn could not load: ${err.message}`;
    }
  },
};
