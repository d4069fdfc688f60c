// Added to Locust's page by llmload (llmload/web/live_charts.py): shows llmload's chart page
// (../charts) in a frame at the top of the "LLM" tab while that tab is selected.
// React's own nodes are never changed: the frame is one extra sibling of the tab's table,
// put back in place when React re-renders the tab, hidden when another tab is selected.
(() => {
  'use strict';
  const script = document.currentScript;
  const page = new URL('../charts', script ? script.src : location.href).href;
  const TAB = 'LLM';
  let box = null;

  function selectedTab() {
    for (const b of document.querySelectorAll('button[role="tab"]')) {
      if (b.textContent.trim() === TAB) return b.getAttribute('aria-selected') === 'true' ? b : null;
    }
    return null;
  }

  // The tab bar's box and the element holding it and the tab's content (the table).
  function panelOf(tab) {
    let el = tab.closest('[role="tablist"]') || tab;
    while (el && el.parentElement && el.parentElement !== document.body) {
      const parent = el.parentElement;
      for (const sibling of parent.children) {
        if (sibling !== el && sibling !== box && (sibling.matches('table') || sibling.querySelector('table'))) return [el, parent];
      }
      el = parent;
    }
    return null;
  }

  function place() {
    const tab = selectedTab();
    if (!tab) {
      if (box) box.style.display = 'none';
      return;
    }
    const found = panelOf(tab);
    if (!found) return;
    const [bar, panel] = found;
    if (!box) {
      box = document.createElement('div');
      box.id = 'llmload-charts';
      box.style.marginBottom = '16px';
      const frame = document.createElement('iframe');
      frame.src = page;
      frame.title = 'llmload live charts';
      frame.style.cssText = 'display:block;width:100%;height:480px;border:0;';
      box.appendChild(frame);
    }
    if (box.parentElement !== panel || box.previousElementSibling !== bar) panel.insertBefore(box, bar.nextSibling);
    box.style.display = '';
  }

  let queued = false;
  const later = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; place(); });
  };
  new MutationObserver(later).observe(document.body, {
    childList: true, subtree: true, attributes: true, attributeFilter: ['aria-selected'],
  });
  later();
})();
