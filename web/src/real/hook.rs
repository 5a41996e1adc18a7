//! Real mode's place in the page: its own `View` reducer (the page shows it instead of the
//! simulated one while real mode is on), the controller, a return to real mode after a reload,
//! and the standing faults following the page's controls.

use yew::prelude::*;

use super::faults::Standing;
use super::Real;
use crate::model::settings::Settings;
use crate::model::view::View;

/// The controller and real mode's view (`real` is `Some` on it exactly while real mode is on).
#[hook]
pub fn use_real(settings: &UseReducerHandle<Settings>) -> (Real, UseReducerHandle<View>) {
    let view = use_reducer(View::default);
    let real = {
        let dispatcher = view.dispatcher();
        (*use_memo((), move |_| Real::boot(dispatcher))).clone()
    };
    {
        let real = real.clone();
        use_effect_with((), move |_| {
            if Real::was_on() {
                real.enter();
            }
        });
    }
    let standing = Standing {
        response_loss: settings.response_loss.value,
        crash_after_charge: settings.crash_after_charge,
        slow_worker: settings.slow_worker,
    };
    {
        let real = real.clone();
        use_effect_with(standing, move |s| real.set_standing(*s));
    }
    (real, view)
}
